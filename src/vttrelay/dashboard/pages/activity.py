"""The activity page: the viewer's recorded API calls (`relay/activity.py`), filtered by world,
key, route, status class and time range, with a "failures only" switch, and each key's calls per
hour (24 hours) and per day (30 days) as small inline SVG bar charts (no script, no CDN).
An account's owner sees its own account's calls; the operator sees every account's."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from aiohttp import web
from markupsafe import Markup, escape

from vttrelay.relay import activity

if TYPE_CHECKING:
    from vttrelay.dashboard.views import Dashboard

CHART_W = 240
CHART_H = 40


def parse_time(text: str, field: str) -> float | None:
    """A time-range bound: empty (none), an ISO date or time (UTC), or an age (`2h`, `7d`:
    that long ago)."""
    text = text.strip()
    if not text:
        return None
    if text[-1:] in ("h", "d", "m") and text[:-1].isdigit():
        size = {"m": 60, "h": 3600, "d": 86400}[text[-1]]
        return time.time() - int(text[:-1]) * size
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{field}: an ISO date (2026-11-27T05:00) or an age (2h, 7d)") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.timestamp()


def read_filter(request: web.Request) -> activity.Filter:
    """The page's query as a filter (ValueError: a bad field, said in words)."""
    q = request.query
    return activity.Filter(
        world=q.get("world", "").strip(),
        key_id=q.get("key", "").strip(),
        route=q.get("route", "").strip(),
        status_class=q.get("status", "").strip(),
        failures=q.get("failures") == "1",
        since=parse_time(q.get("since", ""), "From"),
        until=parse_time(q.get("until", ""), "Until"),
    )


def bars(counts: tuple[int, ...], label: str) -> Markup:
    """`counts` as an inline SVG bar chart (each bar's count in its tooltip)."""
    top = max(counts) or 1
    width = CHART_W / len(counts)
    parts = []
    for i, n in enumerate(counts):
        h = 0 if n == 0 else max(1.0, CHART_H * n / top)
        parts.append(
            f'<rect x="{i * width + 0.5:.1f}" y="{CHART_H - h:.1f}" width="{width - 1:.1f}"'
            f' height="{h:.1f}"><title>{n}</title></rect>'
        )
    return Markup(
        f'<svg class="bars" viewBox="0 0 {CHART_W} {CHART_H}" width="{CHART_W}"'
        f' height="{CHART_H}" role="img" aria-label="{escape(label)}">'
        f'<line x1="0" y1="{CHART_H - 0.5}" x2="{CHART_W}" y2="{CHART_H - 0.5}"/>'
        + "".join(parts)
        + "</svg>"
    )


@dataclass
class ActivityPage:
    """The page's handler, bound to one dashboard."""

    dash: Dashboard

    async def show(self, request: web.Request) -> web.StreamResponse:
        dash = self.dash
        viewer = await dash.signed_in(request)
        log = dash.state.activity
        error = ""
        try:
            chosen = read_filter(request)
        except ValueError as exc:
            chosen, error = activity.Filter(), str(exc)
        await asyncio.to_thread(log.flush)  # the last second's calls too
        db = dash.state.store.db
        now = time.time()
        rows = await asyncio.to_thread(activity.find, db, viewer.account, chosen)
        used = await asyncio.to_thread(activity.usage, db, viewer.account, now)
        keys = await asyncio.to_thread(dash.state.store.list_keys, viewer.account)
        charts = [
            (u, bars(u.hours, f"{u.key_name} per hour"), bars(u.days, f"{u.key_name} per day"))
            for u in used
        ]
        return dash.render(
            request,
            "activity.html",
            viewer,
            400 if error else 200,
            active="activity",
            rows=rows,
            f=chosen,
            q=request.query,
            error=error,
            charts=charts,
            keys=keys,
            classes=activity.STATUS_CLASSES,
            shown=activity.MAX_SHOWN,
            recording=log.enabled,
            days=dash.state.config.activity_days,
        )


def setup(app: web.Application, dash: Dashboard) -> ActivityPage:
    page = ActivityPage(dash)
    app.router.add_get("/dashboard/activity", dash.page(page.show))
    return page
