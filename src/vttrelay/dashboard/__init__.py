"""The relay's web dashboard: worlds, keys, pair and key requests, live events and a request
console in the browser, served by the relay itself (no separate build or server, no CDN).

- `sessions.py`: one-time sign-in tokens and browser sessions (who is looking: the operator or
  one account's owner), stored in the relay's store.
- `scopes.py`: the API-key scopes grouped and explained for the key form.
- `views.py`: the pages and the changes they make, wired into the relay by `setup(app, state)`;
  also the pages a pair request's `pairUrl` and a key request's `approvalUrl` open.
- `mount.py`: the dashboard as the relay's plug-in (`server.assemble` mounts it).
- `templates/` (Jinja2, autoescaped) and `static/` (one stylesheet, one script).
"""
