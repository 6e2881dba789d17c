"""The relay's web dashboard: worlds, keys, pair and key requests, live events and a request
console in the browser, served by the relay itself (no separate build or server, no CDN).

- `sessions.py`: one-time sign-in tokens and browser sessions (who is looking: the operator or
  one account's owner), stored in the relay's store.
- `scopes.py`: the API-key scopes grouped and explained for the key form.
- `views.py`: the core every page builds on (templates, responses, session and CSRF checks).
- `pages/`: one module per page (sign-in, worlds, pair and key requests, keys, live events and
  console, activity, static files), each adding its routes with `setup(app, dash)`.
- `worldlist.py`: the worlds a viewer sees, as rows.
- `mount.py`: the dashboard as the relay's plug-in (`server.assemble` mounts it).
- `templates/` (Jinja2, autoescaped) and `static/` (one stylesheet, one script).
"""
