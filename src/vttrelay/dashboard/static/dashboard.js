/* vttrelay dashboard: the little behaviour the server-rendered pages need.
 *
 * - copy buttons ([data-copy]), confirmations ([data-confirm] forms), scope presets;
 * - the worlds table refreshed every 5 s (#live[data-refresh]);
 * - Live events: the session's stream of the chosen channels (no key: the signed-in session),
 *   each event a readable line, its raw JSON one click away;
 * - Try it: a form per route a session may call, sent through the session's API calls
 *   (`/dashboard/api/...`, with the session's CSRF token), the reply shown formatted.
 */
(() => {
  "use strict";
  const $ = (sel, root = document) => root.querySelector(sel);
  const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));
  const base = () => document.body.dataset.base || "";
  const csrf = () => document.body.dataset.csrf || "";
  const el = (tag, props = {}, ...children) => {
    const node = Object.assign(document.createElement(tag), props);
    for (const child of children) node.append(child);
    return node;
  };
  const pretty = (text) => {
    try { return JSON.stringify(JSON.parse(text), null, 2); } catch { return text; }
  };

  // Copy, confirm, scope presets --------------------------------------------------------------

  function copyText(text, button) {
    const done = () => {
      const was = button.textContent;
      button.textContent = "Copied";
      setTimeout(() => { button.textContent = was; }, 1500);
    };
    const fallback = () => {
      const area = el("textarea", { value: text });
      document.body.append(area);
      area.select();
      document.execCommand("copy");
      area.remove();
      done();
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, fallback);
    } else {
      fallback();
    }
  }

  function valueOf(sel) {
    const node = $(sel);
    return node.tagName === "INPUT" ? node.value : node.textContent.trim();
  }

  document.addEventListener("click", (event) => {
    const button = event.target.closest("button");
    if (!button) return;
    if (button.dataset.copy) copyText(valueOf(button.dataset.copy), button);
    if (button.dataset.scopes) {
      const mode = button.dataset.scopes;
      for (const box of $$("input[name=scopes]", button.form)) {
        box.checked = box.dataset.presets.split(" ").includes(mode);
      }
    }
  });

  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (form.dataset.confirm && !window.confirm(form.dataset.confirm)) event.preventDefault();
  });

  // Worlds: the table refreshed ---------------------------------------------------------------

  function liveWorlds() {
    const live = $("#live[data-refresh]");
    if (!live) return;
    setInterval(async () => {
      if (document.hidden) return;
      try {
        const reply = await fetch(live.dataset.refresh, { credentials: "same-origin" });
        if (reply.ok && !reply.redirected) live.innerHTML = await reply.text();
      } catch { /* the next tick tries again */ }
    }, 5000);
  }

  // Live events: the session's stream ------------------------------------------------------------

  function lineText(line) {  // the relay's readable form of an event (dashboard/feed.py)
    const head = line.speaker ? `${line.speaker} — ${line.text}` : line.text;
    const roll = line.total ? ` ${line.total}${line.formula ? ` (${line.formula})` : ""}` : "";
    return [head + roll, ...(line.notes || [])].join(" · ");
  }

  function liveEvents() {
    const app = $("#events-app");
    if (!app) return;
    const list = $("#ev-list"), payload = $("#ev-payload"), status = $("#ev-status");
    const startBtn = $("#ev-start"), pauseBtn = $("#ev-pause"), filter = $("#ev-filter");
    let source = null, paused = false, held = [];

    const matches = (li) => !filter.value || li.dataset.search.includes(filter.value.toLowerCase());
    const show = (item) => {
      const text = lineText(item.line);
      const li = el(
        "li",
        { tabIndex: 0 },
        el("span", { className: "ev-time", textContent: item.time }),
        el("span", { className: "ev-name", textContent: item.event }),
        el("span", { className: "ev-line", textContent: text }),
      );
      const raw = JSON.stringify(item.data);
      li.dataset.search = `${text} ${item.event} ${raw}`.toLowerCase();
      li.hidden = !matches(li);
      const inspect = () => {
        for (const other of $$("li.sel", list)) other.classList.remove("sel");
        li.classList.add("sel");
        payload.textContent = `event: ${item.event}\nid: ${item.id}\nstream: ${item.channel}\n\n${JSON.stringify(item.data, null, 2)}`;
      };
      li.addEventListener("click", inspect);
      li.addEventListener("keydown", (e) => { if (e.key === "Enter") inspect(); });
      list.prepend(li);
      while (list.children.length > 500) list.lastChild.remove();
    };
    const arrive = (item) => {
      if (paused) {
        held.push(item);
        pauseBtn.textContent = `Resume (${held.length} new)`;
      } else {
        show(item);
      }
    };
    const stop = (text) => {
      if (source) source.close();
      source = null;
      startBtn.textContent = "Start";
      pauseBtn.disabled = true;
      status.textContent = text;
    };
    filter.addEventListener("input", () => { for (const li of list.children) li.hidden = !matches(li); });
    $("#ev-clear").addEventListener("click", () => {
      list.replaceChildren();
      payload.textContent = "Click an event to see its JSON.";
    });
    pauseBtn.addEventListener("click", () => {
      paused = !paused;
      if (!paused) { held.forEach(show); held = []; }
      pauseBtn.textContent = paused ? "Resume" : "Pause";
    });
    startBtn.addEventListener("click", () => {
      if (source) { stop("Stopped."); return; }
      const world = $("#ev-world").value;
      const channels = $$("input[name=stream]:checked", app).map((box) => box.value);
      if (!world || !channels.length) { status.textContent = "Pick a world and a stream."; return; }
      const query = new URLSearchParams($("#ev-query").value.trim().replace(/^\?/, ""));
      query.delete("channel");
      for (const channel of channels) query.append("channel", channel);
      const mine = new EventSource(`${base()}/dashboard/streams/${encodeURIComponent(world)}?${query}`);
      source = mine;
      startBtn.textContent = "Stop";
      pauseBtn.disabled = false;
      status.textContent = `Connecting to ${world}…`;
      // `connected` is folded into the status line, not listed as an event
      mine.addEventListener("connected", () => {
        status.textContent = `Watching ${channels.join(", ")} on ${world} since ${new Date().toLocaleTimeString()}.`;
      });
      mine.addEventListener("message", (m) => {
        arrive({ ...JSON.parse(m.data), time: new Date().toLocaleTimeString() });
      });
      mine.addEventListener("error", (e) => {
        if (source !== mine) return;
        if (e.data) stop(`The relay ended the stream: ${JSON.parse(e.data).error}`);
        else if (mine.readyState === EventSource.CLOSED) stop("The stream was refused (reload the page, or check the world is connected).");
        else status.textContent = "Reconnecting…";
      });
    });
  }

  // Try it --------------------------------------------------------------------------------------

  function fieldFor(param, worlds) {
    const id = `p-${param.name}`;
    const hint = [param.type, param.sources.join("/"), param.description].filter(Boolean).join(" · ");
    let input;
    if (param.type === "boolean") {
      input = el("select", { id, name: param.name },
        el("option", { value: "", textContent: param.default === null ? "(not set)" : `(default ${param.default})` }),
        el("option", { value: "true", textContent: "true" }),
        el("option", { value: "false", textContent: "false" }));
    } else if (["array", "object", "any"].includes(param.type)) {
      input = el("textarea", { id, name: param.name, rows: 3, placeholder: param.type === "any" ? "JSON or text" : `JSON ${param.type}` });
    } else {
      input = el("input", { id, name: param.name, inputMode: param.type === "number" ? "decimal" : param.type === "integer" ? "numeric" : "text" });
      if (param.name === "clientId" && worlds) {
        input.setAttribute("list", "world-ids");
        input.value = worlds;
      }
    }
    if (param.default !== null && input.tagName !== "SELECT") input.placeholder = `default ${JSON.stringify(param.default)}`;
    const label = el("label", { htmlFor: id },
      el("span", { className: param.required ? "req" : "", textContent: param.name }), input,
      el("span", { className: "hint", textContent: hint }));
    return label;
  }

  function buildRequest(route, form) {
    let path = route.path;
    const query = new URLSearchParams();
    const body = {};
    let hasBody = false;
    for (const param of route.params) {
      const raw = form.elements[param.name].value.trim();
      if (raw === "") continue;
      let value = raw;
      if (param.type === "number" || param.type === "integer") {
        value = Number(raw);
        if (Number.isNaN(value)) throw new Error(`${param.name}: not a number`);
      } else if (param.type === "boolean") {
        value = raw === "true";
      } else if (["array", "object", "any"].includes(param.type)) {
        try { value = JSON.parse(raw); } catch {
          if (param.type !== "any") throw new Error(`${param.name}: not valid JSON`);
        }
      }
      if (param.sources.includes("path")) {
        path = path.replace(new RegExp(`\\{${param.name}(:[^}]*)?\\}`), encodeURIComponent(raw));
      } else if (route.method !== "GET" && param.sources.includes("body")
                 && (param.sources[0] === "body" || !param.sources.includes("query"))) {
        body[param.name] = value;
        hasBody = true;
      } else {
        query.set(param.name, typeof value === "string" ? value : JSON.stringify(value));
      }
    }
    const qs = query.toString();
    return { path: `${path}${qs ? `?${qs}` : ""}`, body: hasBody ? JSON.stringify(body) : null };
  }

  function curlLine(method, url, key, body) {
    const quote = (s) => `'${s.replace(/'/g, "'\\''")}'`;
    const parts = ["curl"];
    if (method !== "GET") parts.push("-X", method);
    parts.push("-H", quote(`x-api-key: ${key || "YOUR_KEY"}`));
    if (body !== null) parts.push("-H", quote("content-type: application/json"), "-d", quote(body));
    parts.push(quote(new URL(url, window.location.origin).href));
    return parts.join(" ");
  }

  function console_() {
    const app = $("#console-app");
    if (!app) return;
    const routes = JSON.parse($("#routes-data").textContent);
    const select = $("#c-route"), params = $("#c-params"), form = $("#c-form");
    const firstWorld = ($("#world-ids option") || {}).value || "";
    const groups = new Map();
    routes.forEach((route, index) => {
      if (!groups.has(route.group)) groups.set(route.group, el("optgroup", { label: route.group }));
      groups.get(route.group).append(el("option", { value: index, textContent: `${route.method} ${route.path}` }));
    });
    select.append(...groups.values());
    const wanted = decodeURIComponent(window.location.hash.slice(1));
    const found = routes.findIndex((r) => `${r.method} ${r.path}` === wanted);
    select.value = String(found >= 0 ? found : Math.max(0, routes.findIndex((r) => r.path === "/clients")));
    const render = () => {
      const route = routes[Number(select.value)];
      $("#c-summary").textContent = `${route.summary}${route.scope ? ` A key needs the scope ${route.scope}.` : ""}`;
      params.replaceChildren(...route.params.map((p) => fieldFor(p, firstWorld)));
      if (!route.params.length) params.append(el("p", { className: "muted", textContent: "No parameters." }));
      history.replaceState(null, "", `#${encodeURIComponent(`${route.method} ${route.path}`)}`);
    };
    select.addEventListener("change", render);
    render();
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const route = routes[Number(select.value)];
      const status = $("#c-status"), reply = $("#c-reply");
      let request;
      try { request = buildRequest(route, form); } catch (err) { status.textContent = err.message; return; }
      $("#c-curl").textContent = curlLine(route.method, `${base()}${request.path}`, "", request.body);
      const headers = { "X-CSRF-Token": csrf() };
      if (request.body !== null) headers["content-type"] = "application/json";
      status.textContent = "Sending…";
      const started = performance.now();
      try {
        const answer = await fetch(`${base()}/dashboard/api${request.path}`, {
          method: route.method, headers, body: request.body, cache: "no-store", credentials: "same-origin",
        });
        const type = answer.headers.get("content-type") || "";
        const text = type.startsWith("image/") ? `(${type} image, ${(await answer.blob()).size} bytes)` : await answer.text();
        const ms = Math.round(performance.now() - started);
        status.replaceChildren(el("span", {
          className: answer.ok ? "status-ok" : "status-bad",
          textContent: `${answer.status} ${answer.statusText}`,
        }), ` · ${ms} ms`);
        reply.textContent = type.includes("json") ? pretty(text) : text;
      } catch (err) {
        status.textContent = `Network error: ${err.message}`;
      }
    });
  }

  document.addEventListener("DOMContentLoaded", () => {
    liveWorlds();
    liveEvents();
    console_();
  });
})();
