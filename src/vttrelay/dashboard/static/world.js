/* vttrelay dashboard: the world page (templates/world.html), filled and kept live in the browser.
 *
 * Every read and change is an API call of the signed-in session (`/dashboard/api/<route>`: the
 * relay's request core, as the account's own key, recorded in the activity log; changes carry
 * the session's CSRF token). One session stream (`/dashboard/streams/<world>`) brings the chat,
 * actor, combat and scene events: a chat message becomes a feed line (the relay sends its
 * readable form), an actor event re-reads that actor, a combat event the tracker, a scene event
 * the scene and its picture.
 *
 * The cards are the active scene's tokens and the encounter's combatants, each with its own
 * actor: a linked token (a hero) is its world actor (`Actor.<id>`), an unlinked one (each goblin)
 * its token's actor (`Scene.<s>.Token.<t>.Actor.<id>`: the world actor with the token's own HP
 * and conditions), read, damaged, healed and changed under that uuid. Tokens that share a name
 * are numbered in scene order ("Goblin 1", "Goblin 2") as the MCP tools name them.
 */
(() => {
  "use strict";
  const app = document.getElementById("world-app");
  if (!app) return;
  const base = document.body.dataset.base || "";
  const csrf = document.body.dataset.csrf || "";
  const world = app.dataset.world;
  const system = app.dataset.system;
  const $ = (id) => document.getElementById(id);
  const el = (tag, props = {}, ...children) => {
    const node = Object.assign(document.createElement(tag), props);
    for (const child of children) if (child !== null && child !== undefined) node.append(child);
    return node;
  };
  const MAX_FEED = 200;
  const HP = "system.attributes.hp.value";
  const state = {
    actors: new Map(), encounter: null, effects: [], timers: new Map(),
    labels: new Map(),  // actor uuid -> the token's name as the page shows it ("Goblin 2")
    tokenLabels: new Map(),  // token uuid -> the same (the tracker's combatants)
    sceneActors: new Set(), combatActors: new Set(),  // whose cards the page shows
  };

  function problem(err) {
    $("w-error").textContent = err ? String(err.message || err) : "";
  }

  async function api(method, path, { query = {}, body = null } = {}) {
    const q = new URLSearchParams({ clientId: world });
    for (const [k, v] of Object.entries(query)) q.set(k, typeof v === "string" ? v : JSON.stringify(v));
    const headers = { "X-CSRF-Token": csrf, Accept: "application/json" };
    if (body !== null) headers["content-type"] = "application/json";
    const reply = await fetch(`${base}/dashboard/api${path}?${q}`, {
      method, headers, body: body === null ? null : JSON.stringify(body),
      credentials: "same-origin", cache: "no-store",
    });
    const data = await reply.json().catch(() => ({}));
    if (!reply.ok) throw new Error(`${method} ${path}: ${data.error || reply.status}`);
    return data;
  }

  const later = (key, run, ms = 150) => {  // the events of `ms` coalesce into one re-read
    if (state.timers.has(key)) return;
    state.timers.set(key, setTimeout(() => { state.timers.delete(key); run().catch(problem); }, ms));
  };

  // Actors --------------------------------------------------------------------------------------

  async function loadActor(uuid) {
    let actor;
    if (system === "dnd5e") {
      const r = await api("GET", "/dnd5e/get-actor-details", {
        query: { actorUuid: uuid, details: ["stats", "conditions"] },
      });
      const s = r.data.stats;
      actor = {
        uuid, name: s.name, img: s.img, hp: s.hp, ac: s.ac, level: s.level,
        conditions: r.data.conditions || [], concentration: r.data.concentration || { active: false },
      };
    } else {
      const r = await api("GET", "/get", { query: { uuid } });
      const d = r.data || {};
      const attrs = (d.system || {}).attributes || {};
      actor = {
        uuid, name: d.name, img: d.img, hp: attrs.hp || null,
        ac: attrs.ac && typeof attrs.ac.value === "number" ? attrs.ac.value : null, level: null,
        conditions: (d.statuses || []).map((id) => ({ id, name: id })), concentration: { active: false },
      };
    }
    if (!state.actors.has(uuid)) return;  // its token left the scene meanwhile
    state.actors.set(uuid, actor);
    renderActor(actor);
  }

  function addActor(uuid) {
    if (state.actors.has(uuid)) return;
    state.actors.set(uuid, null);  // its card comes with its details
    loadActor(uuid).catch(problem);
  }

  const nameOf = (actor) => state.labels.get(actor.uuid) || actor.name || "?";
  const down = (actor) => !!(actor && actor.hp && typeof actor.hp.value === "number" && actor.hp.value <= 0);

  // Tokens that share a name get numbers in scene order, "Goblin 1", "Goblin 2" (mcp/tools/names.py)
  function handles(tokens) {
    const counts = new Map();
    for (const t of tokens) { const k = String(t.name || "").toLowerCase(); counts.set(k, (counts.get(k) || 0) + 1); }
    const seen = new Map();
    return new Map(tokens.map((t) => {
      const k = String(t.name || "").toLowerCase();
      seen.set(k, (seen.get(k) || 0) + 1);
      return [t._id, counts.get(k) > 1 ? `${t.name} ${seen.get(k)}` : String(t.name || "")];
    }));
  }

  // The cards kept: the scene's tokens and the encounter's combatants; the others go
  function prune() {
    for (const uuid of Array.from(state.actors.keys())) {
      if (state.sceneActors.has(uuid) || state.combatActors.has(uuid)) continue;
      state.actors.delete(uuid);
      const li = $("w-actors").querySelector(`li[data-uuid="${CSS.escape(uuid)}"]`);
      if (li) li.remove();
    }
  }

  const initials = (name) => (name || "?").split(/\s+/).map((w) => w[0]).join("").slice(0, 2).toUpperCase();

  // A portrait: a picture the world sends inline, or a file of the world's own file store
  // (`GET /download`, its data URL); the tabletop server's own assets (icons/, systems/,
  // modules/) are not files of the world, so those actors show their initials.
  const portraits = new Map();  // path -> data URL, "" when there is none, a promise meanwhile
  const SERVER_ASSETS = /^(icons|systems|modules|ui|cards)\//;

  function portraitOf(actor) {
    const img = typeof actor.img === "string" ? actor.img : "";
    if (img.startsWith("data:image/")) return img;
    if (!img || SERVER_ASSETS.test(img) || /^[a-z]+:/i.test(img) || img.length > 512) return "";
    const known = portraits.get(img);
    if (typeof known === "string") return known;
    if (!known) {
      portraits.set(img, api("GET", "/download", { query: { path: img, format: "base64" } })
        .then((r) => {
          const data = typeof r.fileData === "string" && r.fileData.startsWith("data:image/") ? r.fileData : "";
          portraits.set(img, data);
          for (const a of state.actors.values()) if (a && a.img === img && data) renderActor(a);
        })
        .catch(() => portraits.set(img, "")));
    }
    return "";
  }

  function portrait(actor) {
    const src = portraitOf(actor);
    if (src) return el("img", { className: "portrait", src, alt: "" });
    return el("span", { className: "portrait initials", textContent: initials(nameOf(actor)), ariaHidden: "true" });
  }

  function hpBar(hp) {
    if (!hp || typeof hp.value !== "number") return el("span", { className: "muted", textContent: "no HP" });
    const max = Math.max(1, hp.max || 1);
    const share = Math.max(0, Math.min(1, hp.value / max));
    const fill = el("span", { className: "fill" });
    fill.style.width = `${Math.round(share * 100)}%`;
    const bar = el("span", { className: `hpbar ${share <= 0.25 ? "low" : share <= 0.5 ? "mid" : ""}` }, fill);
    bar.setAttribute("role", "meter");
    bar.setAttribute("aria-valuemin", "0");
    bar.setAttribute("aria-valuemax", String(max));
    bar.setAttribute("aria-valuenow", String(hp.value));
    bar.setAttribute("aria-label", "Hit points");
    const temp = hp.temp ? ` (+${hp.temp} temp)` : "";
    return el("span", { className: "hp" }, bar, el("span", { className: "hp-text", textContent: `${hp.value} / ${hp.max} HP${temp}` }));
  }

  function renderActor(actor) {
    const list = $("w-actors");
    let li = list.querySelector(`li[data-uuid="${CSS.escape(actor.uuid)}"]`);
    if (!li) {  // characters (they have a level) first, then by name
      li = el("li", { className: "actor" });
      li.dataset.uuid = actor.uuid;
      li.dataset.order = `${actor.level ? 0 : 1} ${nameOf(actor).toLowerCase()}`;
      const next = Array.from(list.children).find((other) => other.dataset.order > li.dataset.order);
      list.insertBefore(li, next || null);
    }
    const facts = [actor.level ? `Level ${actor.level}` : "", actor.ac !== null && actor.ac !== undefined ? `AC ${actor.ac}` : ""]
      .filter(Boolean).join(" · ");
    const chips = el("span", { className: "conditions" });
    li.classList.toggle("down", down(actor));
    if (down(actor)) chips.append(el("span", { className: "chip bad", textContent: actor.level ? "Dying" : "Defeated" }));
    for (const c of actor.conditions) {
      const chip = el("button", { className: "chip", type: "button", textContent: `${c.name} ×`, title: `Remove ${c.name}` });
      chip.dataset.remove = c.id;
      chips.append(chip);
    }
    if (actor.concentration && actor.concentration.active) {
      chips.append(el("span", { className: "chip conc", textContent: `Concentrating${actor.concentration.name ? `: ${actor.concentration.name}` : ""}` }));
    }
    // the GM's controls are made once per card: a re-read (an event) keeps what is typed there
    let gm = li.querySelector(".gm");
    if (!gm) {
      gm = el("div", { className: "gm" },
        el("input", { className: "amount", type: "number", min: 1, max: 9999, placeholder: "HP", ariaLabel: `Amount for ${nameOf(actor)}` }),
        el("button", { type: "button", className: "damage", textContent: "Damage" }),
        el("button", { type: "button", className: "heal", textContent: "Heal" }),
        el("select", { className: "add-condition", ariaLabel: `Add a condition to ${nameOf(actor)}` }));
    }
    gm.querySelector("select").replaceChildren(
      el("option", { value: "", textContent: "Add condition…" }),
      ...state.effects.filter((e) => !actor.conditions.some((c) => c.id === e.id))
        .map((e) => el("option", { value: e.id, textContent: e.name })));
    const main = el("div", { className: "actor-main" },
      el("div", { className: "name-line" }, el("strong", { className: "name", textContent: nameOf(actor) }),
        el("span", { className: "muted facts", textContent: facts })),
      hpBar(actor.hp), chips);
    if (gm.parentNode === li) {  // in place: the controls keep their focus and value
      li.children[0].replaceWith(portrait(actor));
      li.children[1].replaceWith(main);
    } else {
      li.replaceChildren(portrait(actor), main, gm);
    }
    if (state.encounter) renderCombat();  // its HP and defeated mark in the tracker
  }

  async function changeHp(actor, amount, heal) {
    const hp = actor.hp;
    if (!hp || !(amount > 0)) return;
    const room = heal ? Math.max(0, (hp.max || 0) - hp.value) : Math.max(0, hp.value);
    const n = Math.min(amount, room);  // HP stays between 0 and its maximum
    if (n <= 0) return;
    await api("POST", heal ? "/increase" : "/decrease", { query: { uuid: actor.uuid }, body: { attribute: HP, amount: n } });
    await loadActor(actor.uuid);
  }

  $("w-actors").addEventListener("click", (event) => {
    const button = event.target.closest("button");
    const li = event.target.closest("li.actor");
    if (!button || !li) return;
    const actor = state.actors.get(li.dataset.uuid);
    if (!actor) return;
    problem(null);
    if (button.dataset.remove) {
      api("DELETE", "/effects", { query: { uuid: actor.uuid, statusId: button.dataset.remove } })
        .then(() => loadActor(actor.uuid)).catch(problem);
    } else if (button.classList.contains("damage") || button.classList.contains("heal")) {
      const input = li.querySelector("input.amount");
      changeHp(actor, Number(input.value), button.classList.contains("heal"))
        .then(() => { input.value = ""; }).catch(problem);
    }
  });

  $("w-actors").addEventListener("change", (event) => {
    const select = event.target.closest("select.add-condition");
    const li = event.target.closest("li.actor");
    if (!select || !li || !select.value) return;
    problem(null);
    api("POST", "/effects", { body: { uuid: li.dataset.uuid, statusId: select.value } })
      .then(() => loadActor(li.dataset.uuid)).catch(problem);
  });

  // Combat --------------------------------------------------------------------------------------

  async function loadCombat() {
    const r = await api("GET", "/encounters");
    const all = r.encounters || [];
    state.encounter = all.find((e) => e.current) || all[0] || null;
    const combatants = (state.encounter && state.encounter.combatants) || [];
    state.combatActors = new Set(combatants.map((c) => c.actorUuid).filter(Boolean));
    for (const c of combatants) {  // a combatant of another scene: by its own name
      if (c.actorUuid && !state.labels.has(c.actorUuid) && c.name) state.labels.set(c.actorUuid, c.name);
    }
    renderCombat();
    for (const uuid of state.combatActors) addActor(uuid);
    prune();
  }

  const labelOf = (c) => state.tokenLabels.get(c.tokenUuid) || state.labels.get(c.actorUuid) || c.name;

  function renderCombat() {
    const enc = state.encounter;
    const list = $("w-tracker");
    $("w-next").disabled = !enc;
    app.classList.toggle("fighting", !!enc);
    if (!enc) {
      $("w-round").textContent = "No encounter.";
      list.replaceChildren();
      return;
    }
    const current = enc.combatants[enc.turn] || null;
    $("w-round").textContent = `${enc.name || "Encounter"} · Round ${enc.round}${current ? ` · ${labelOf(current)}'s turn` : ""}`;
    list.replaceChildren(...enc.combatants.map((c, i) => {
      const actor = state.actors.get(c.actorUuid);
      // defeated: marked so, or a creature (not a character) at 0 HP
      const defeated = c.defeated || (down(actor) && !actor.level);
      const hp = actor && actor.hp && typeof actor.hp.value === "number" ? `${actor.hp.value}/${actor.hp.max} HP` : "";
      const li = el("li", { className: [i === enc.turn ? "current" : "", defeated ? "defeated" : ""].join(" ").trim() },
        el("span", { className: "init", title: "Initiative", textContent: c.initiative === null || c.initiative === undefined ? "–" : String(c.initiative) }),
        el("span", { className: "cname", textContent: labelOf(c) }),
        hp ? el("span", { className: "chp muted", textContent: hp }) : null,
        defeated ? el("span", { className: "chip bad", textContent: "defeated" }) : null);
      if (i === enc.turn) li.setAttribute("aria-current", "true");
      return li;
    }));
  }

  $("w-next").addEventListener("click", () => {
    const enc = state.encounter;
    if (!enc) return;
    problem(null);
    $("w-next").disabled = true;
    api("POST", "/next-turn", { body: { encounterId: enc.id } })
      .then(loadCombat).catch(problem).finally(() => { $("w-next").disabled = !state.encounter; });
  });

  // Scene ---------------------------------------------------------------------------------------

  async function loadScene() {
    const r = await api("GET", "/scene", { query: { active: true } });
    const scene = r.data || {};
    $("w-scene-name").textContent = scene.name || "";
    const tokens = (scene.tokens || []).filter((t) => t && t._id);
    const labels = handles(tokens);
    state.sceneActors = new Set();
    for (const t of tokens) {
      if (!t.actorId) continue;
      const uuid = t.actorLink ? `Actor.${t.actorId}` : `Scene.${scene._id}.Token.${t._id}.Actor.${t.actorId}`;
      state.labels.set(uuid, labels.get(t._id) || "");
      state.tokenLabels.set(`Scene.${scene._id}.Token.${t._id}`, labels.get(t._id) || "");
      if (t.hidden) continue;
      state.sceneActors.add(uuid);
      addActor(uuid);
    }
    prune();
    if (state.encounter) renderCombat();
    const img = $("w-scene-img");
    const q = new URLSearchParams({ clientId: world, active: "true", format: "jpeg", quality: "0.85", t: String(Date.now()) });
    img.onload = () => { img.hidden = false; };
    img.onerror = () => { img.hidden = true; };
    img.src = `${base}/dashboard/api/scene/image?${q}`;
  }

  // Feed ----------------------------------------------------------------------------------------

  function feedLine(line, when) {
    const li = el("li", { className: `line ${line.kind}` });
    const time = when ? new Date(when) : new Date();
    li.append(el("time", { className: "muted", textContent: time.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }) }));
    if (line.speaker) li.append(el("strong", { className: "speaker", textContent: line.speaker }), " — ");
    li.append(el("span", { className: "text", textContent: line.text }));
    if (line.total) {
      li.append(" ", el("span", { className: "total", textContent: line.total }));
      if (line.formula) li.append(el("span", { className: "formula muted", textContent: ` (${line.formula})` }));
    }
    for (const note of line.notes || []) {
      const kind = /\bmiss/.test(note) ? "miss" : /\bhit|\bcrit/.test(note) ? "hit" : "";
      li.append(el("span", { className: `note-line ${kind}`, textContent: note }));
    }
    return li;
  }

  // A token's message says which token spoke, as the page names it ("Goblin" -> "Goblin 2")
  function relabel(line, data) {
    const sp = data && data.speaker;
    const label = sp && sp.scene && sp.token ? state.tokenLabels.get(`Scene.${sp.scene}.Token.${sp.token}`) : "";
    return label && line.speaker && label !== line.speaker && label.startsWith(line.speaker) ? { ...line, speaker: label } : line;
  }

  function addLine(line, when, id) {
    const feed = $("w-feed");
    if (id && feed.querySelector(`li[data-id="${CSS.escape(id)}"]`)) return;  // seen already
    const li = feedLine(line, when);
    if (id) li.dataset.id = id;
    li.dataset.when = String(when || Date.now());
    const later_ = Array.from(feed.children).find((other) => Number(other.dataset.when) > Number(li.dataset.when));
    feed.insertBefore(li, later_ || null);  // in time order, whichever came first
    while (feed.children.length > MAX_FEED) feed.firstChild.remove();
    feed.scrollTop = feed.scrollHeight;
  }

  async function loadFeed() {
    const reply = await fetch(`${base}/dashboard/worlds/${encodeURIComponent(world)}/feed`, { credentials: "same-origin", cache: "no-store" });
    const data = await reply.json();
    if (!reply.ok) throw new Error(`feed: ${data.error || reply.status}`);
    for (const item of data.lines) addLine(relabel(item.line, item.data), item.data && item.data.timestamp, item.data && item.data.id);
  }

  $("w-chat").addEventListener("submit", (event) => {
    event.preventDefault();
    const input = $("w-chat-text");
    const content = input.value.trim();
    if (!content) return;
    problem(null);
    api("POST", "/chat", { body: { content } }).then(() => { input.value = ""; }).catch(problem);
  });

  // Live ----------------------------------------------------------------------------------------

  function handle(event) {
    const data = event.data || {};
    if (event.channel === "chat-events" && event.event === "chat-create") addLine(relabel(event.line, data), data.timestamp, data.id);
    else if (event.channel === "actor-events" && data.actorUuid) {
      // the actor, and the unlinked tokens made from it (a world actor's change is theirs too)
      for (const uuid of state.actors.keys()) {
        if (uuid === data.actorUuid || uuid.endsWith(`.${data.actorUuid}`)) later(`actor:${uuid}`, () => loadActor(uuid));
      }
    } else if (event.channel === "combat-events") later("combat", loadCombat);
    else if (event.channel === "scene-events") later("scene", loadScene, 1000);  // a new picture at most once a second
  }

  async function loadAll() {
    const effects = await api("GET", "/effects/list").catch(() => ({ data: { effects: [] } }));
    state.effects = (effects.data && effects.data.effects) || [];
    await loadScene();  // first: the feed names tokens as the scene does
    await Promise.all([loadCombat(), loadFeed()]);
  }

  function connect() {
    const q = new URLSearchParams();
    for (const channel of app.dataset.channels.split(",")) q.append("channel", channel);
    const source = new EventSource(`${base}/dashboard/streams/${encodeURIComponent(world)}?${q}`);
    let opened = false;
    source.addEventListener("connected", () => {
      $("w-live").textContent = "live";
      $("w-live").className = "live-state on";
      if (opened) loadAll().catch(problem);  // back after a break: events may have been missed
      opened = true;
    });
    source.addEventListener("message", (m) => handle(JSON.parse(m.data)));
    source.addEventListener("error", (e) => {
      $("w-live").className = "live-state";
      if (e.data) {  // the relay ended the stream with a reason
        source.close();
        $("w-live").textContent = `stopped: ${JSON.parse(e.data).error}`;
      } else {
        $("w-live").textContent = source.readyState === EventSource.CLOSED ? "stopped (reload the page)" : "reconnecting…";
      }
    });
  }

  connect();  // first: what happens while the page reads is not missed (the feed skips repeats)
  loadAll().catch(problem);
})();
