// The world API that execute-js scripts see (vttrelay.world.scripts.child runs this first).
//
// This file is one expression: a function that builds the API and returns `control`, the only
// thing the Python side ever calls. Python and JavaScript exchange JSON strings through it:
//   {"cmd":"start","init":<world snapshot>,"source":<script>}  build `game`, start the script
//   {"cmd":"take"}     -> {"state", "json"|"error", "calls":[{id,op,args}], "nextTimer"}
//   {"cmd":"resolve","replies":[{"id","value"}|{"id","error"}]}   answer world calls
//   {"cmd":"fire"}     run the timers that are due
// The script never touches Python: writes (actor.update, item.update, ChatMessage.create,
// game.settings.set) and lookups that the snapshot lacks are queued as world calls and return
// Promises; reads are synchronous, from the snapshot, refreshed by each write's answer.
(function () {
  "use strict";

  // Intrinsics captured before any script runs (a script may replace the global ones).
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const keysOf = Object.keys;
  const defineProperty = Object.defineProperty;
  const create = Object.create;
  const isArray = Array.isArray;
  const promiseThen = Promise.prototype.then;
  const PromiseCtor = Promise;
  const ErrorCtor = Error;
  const dateNow = Date.now;
  const AsyncFunction = async function () {}.constructor;

  const clone = (value) => (value === undefined ? undefined : parse(stringify(value)));
  const hidden = (obj, name, value) =>
    defineProperty(obj, name, { value, writable: true, configurable: true, enumerable: false });

  function messageOf(err) {
    try {
      if (err instanceof ErrorCtor) return String(err.message);
      return String(err);
    } catch (failure) {
      // Reading the error failed: say why. At the memory limit that is the engine's own
      // "out of memory" error, or `null` when it could not even allocate that one.
      if (failure === null) return "null";
      try {
        if (failure instanceof ErrorCtor) return String(failure.message);
      } catch (_e) {}
      return "unknown error";
    }
  }

  // World calls: queued here, run by Python on the event loop, answered by `resolve`. ---------

  let nextCallId = 1;
  let queue = [];
  const waiting = create(null);

  function worldCall(op, args) {
    const text = stringify(args);
    return new PromiseCtor((resolve, reject) => {
      const id = nextCallId++;
      waiting[id] = { resolve, reject };
      queue[queue.length] = { id, op, text };
    });
  }

  // Timers (setTimeout/clearTimeout): Python sleeps until the next one is due. ---------------

  let nextTimerId = 1;
  let timers = [];

  function setTimeout(fn, delay, ...args) {
    if (typeof fn !== "function") throw new TypeError("setTimeout needs a function");
    const id = nextTimerId++;
    const ms = Number(delay) > 0 ? Number(delay) : 0;
    timers[timers.length] = { id, due: dateNow() + ms, fn, args };
    return id;
  }

  function clearTimeout(id) {
    timers = timers.filter((t) => t.id !== id);
  }

  // Collections and documents, shaped like the tabletop's client API. ------------------------

  class Collection extends Map {
    constructor(entries) {
      super();
      for (const entry of entries || []) super.set(entry.id, entry);
    }
    get contents() {
      return Array.from(super.values());
    }
    [Symbol.iterator]() {
      return super.values();
    }
    getName(name, { strict = false } = {}) {
      const wanted = String(name).toLowerCase();
      const found = this.find((e) => String(e.name).toLowerCase() === wanted);
      if (found === undefined && strict) throw new Error(`An entry with name ${name} does not exist`);
      return found;
    }
    get(key, { strict = false } = {}) {
      const found = super.get(key);
      if (found === undefined && strict) throw new Error(`An entry with key ${key} does not exist`);
      return found;
    }
    filter(fn) {
      return this.contents.filter(fn);
    }
    find(fn) {
      return this.contents.find(fn);
    }
    map(fn) {
      return this.contents.map(fn);
    }
    some(fn) {
      return this.contents.some(fn);
    }
    every(fn) {
      return this.contents.every(fn);
    }
    reduce(fn, initial) {
      return this.contents.reduce(fn, initial);
    }
    toJSON() {
      return this.contents.map((e) => (e && typeof e.toJSON === "function" ? e.toJSON() : e));
    }
  }

  class Document {
    constructor(source, parent) {
      hidden(this, "parent", parent || null);
      this._assign(source);
    }
    _assign(source) {
      hidden(this, "_source", source);
      for (const key of keysOf(this)) delete this[key];
      for (const key of keysOf(source)) {
        if (!this.constructor.embedded.includes(key)) this[key] = source[key];
      }
    }
    static get embedded() {
      return [];
    }
    get id() {
      return this._source._id;
    }
    get documentName() {
      return this.constructor.documentName;
    }
    getFlag(scope, key) {
      const flags = (this._source.flags || {})[scope];
      return flags === undefined ? undefined : getProperty(flags, key);
    }
    toObject() {
      return clone(this._source);
    }
    toJSON() {
      return this.toObject();
    }
  }

  class Item extends Document {
    static get documentName() {
      return "Item";
    }
    get uuid() {
      return `${this.parent.uuid}.Item.${this.id}`;
    }
    get actor() {
      return this.parent;
    }
    async update(changes) {
      const doc = await worldCall("item.update", {
        actorId: this.parent.id,
        id: this.id,
        changes: changes || {},
      });
      this.parent._refresh(doc);
      return this.parent.items.get(this.id);
    }
  }

  class ActiveEffect extends Document {
    static get documentName() {
      return "ActiveEffect";
    }
    get uuid() {
      return `${this.parent.uuid}.ActiveEffect.${this.id}`;
    }
  }

  class Actor extends Document {
    static get documentName() {
      return "Actor";
    }
    static get embedded() {
      return ["items", "effects"];
    }
    _assign(source) {
      super._assign(source);
      const old = this.items;
      const items = (source.items || []).map((s) => {
        const existing = old && old.get(s._id);
        if (existing) {
          existing._assign(s);
          return existing;
        }
        return new Item(s, this);
      });
      hidden(this, "items", new Collection(items));
      hidden(this, "effects", new Collection((source.effects || []).map((s) => new ActiveEffect(s, this))));
    }
    _refresh(doc) {
      if (doc && typeof doc === "object" && doc._id === this.id) this._assign(doc);
    }
    get uuid() {
      return `Actor.${this.id}`;
    }
    async update(changes) {
      const doc = await worldCall("actor.update", { id: this.id, changes: changes || {} });
      this._refresh(doc);
      return this;
    }
  }

  class TokenDocument extends Document {
    static get documentName() {
      return "Token";
    }
    get uuid() {
      return `${this.parent.uuid}.Token.${this.id}`;
    }
    get actor() {
      return game.actors.get(this._source.actorId) || null;
    }
  }

  class Scene extends Document {
    static get documentName() {
      return "Scene";
    }
    static get embedded() {
      return ["tokens"];
    }
    _assign(source) {
      super._assign(source);
      hidden(this, "tokens", new Collection((source.tokens || []).map((s) => new TokenDocument(s, this))));
    }
    get uuid() {
      return `Scene.${this.id}`;
    }
  }

  class User {
    constructor(summary) {
      hidden(this, "_source", summary);
      for (const key of keysOf(summary)) this[key] = summary[key];
    }
    get uuid() {
      return `User.${this.id}`;
    }
    toObject() {
      return clone(this._source);
    }
    toJSON() {
      return this.toObject();
    }
  }

  // foundry.utils helpers scripts commonly use. -----------------------------------------------

  function getProperty(obj, path) {
    let current = obj;
    for (const part of String(path).split(".")) {
      if (current === null || current === undefined) return undefined;
      current = current[part];
    }
    return current;
  }

  function setProperty(obj, path, value) {
    const parts = String(path).split(".");
    let current = obj;
    for (const part of parts.slice(0, -1)) {
      if (current[part] === null || typeof current[part] !== "object") current[part] = {};
      current = current[part];
    }
    current[parts[parts.length - 1]] = value;
    return true;
  }

  // The API ------------------------------------------------------------------------------------

  let game = null;

  function speakerFor({ scene, actor, token, alias } = {}) {
    const active = game.scenes.active;
    const out = { scene: scene ? scene.id || scene : active ? active.id : null, actor: null, token: null };
    if (token) {
      out.token = token.id || token;
      if (token.parent) out.scene = token.parent.id;
      if (!actor && token.actor) actor = token.actor;
    }
    if (actor) {
      out.actor = actor.id || actor;
      const a = game.actors.get(out.actor);
      if (!token && active && a) {
        const linked = active.tokens.find((t) => t._source.actorId === a.id && t._source.actorLink);
        if (linked) out.token = linked.id;
      }
      if (a) out.alias = a.name;
    }
    if (alias) out.alias = String(alias);
    return out;
  }

  const ChatMessage = {
    documentName: "ChatMessage",
    async create(data) {
      if (data === null || typeof data !== "object") throw new Error("ChatMessage.create needs an object");
      return worldCall("chat.create", { data });
    },
    getSpeaker(options) {
      return speakerFor(options || {});
    },
  };

  function fromUuidSync(uuid) {
    const parts = String(uuid).split(".");
    if (parts.length < 2 || parts.length % 2) return null;
    let doc = null;
    for (let i = 0; i < parts.length; i += 2) {
      const kind = parts[i];
      const id = parts[i + 1];
      if (i === 0) {
        doc =
          kind === "Actor" ? game.actors.get(id) :
          kind === "Scene" ? game.scenes.get(id) :
          kind === "User" ? game.users.get(id) : undefined;
      } else if (doc instanceof Actor && kind === "Item") doc = doc.items.get(id);
      else if (doc instanceof Actor && kind === "ActiveEffect") doc = doc.effects.get(id);
      else if (doc instanceof Scene && kind === "Token") doc = doc.tokens.get(id);
      else if (doc instanceof TokenDocument && kind === "Actor") doc = doc._source.actorId === id ? doc.actor : null;
      else doc = undefined;
      if (doc === undefined || doc === null) return null;
    }
    return doc;
  }

  async function fromUuid(uuid) {
    const kind = String(uuid).split(".")[0];
    if (kind === "Actor" || kind === "Scene" || kind === "User") return fromUuidSync(uuid);
    return worldCall("fromUuid", { uuid: String(uuid) });
  }

  function buildGame(init) {
    const settings = init.settings || {};
    const actors = new Collection((init.actors || []).map((s) => new Actor(s, null)));
    const scenes = new Collection((init.scenes || []).map((s) => new Scene(s, null)));
    defineProperty(scenes, "active", {
      get: () => scenes.find((s) => s._source.active) || null,
      enumerable: false,
    });
    defineProperty(scenes, "current", { get: () => scenes.active, enumerable: false });
    const users = new Collection((init.users || []).map((u) => new User(u)));
    const settingsApi = {
      get(namespace, key) {
        const full = `${namespace}.${key}`;
        if (!(full in settings)) throw new Error(`"${full}" is not a registered game setting`);
        return clone(settings[full]);
      },
      async set(namespace, key, value) {
        const full = `${namespace}.${key}`;
        const stored = await worldCall("settings.set", { key: full, value: value === undefined ? null : value });
        settings[full] = stored;
        return clone(stored);
      },
    };
    return {
      world: init.world || {},
      system: init.system || {},
      version: init.version || "",
      release: { generation: Number(String(init.version || "0").split(".")[0]) },
      userId: init.user ? init.user.id : null,
      get user() {
        return users.get(this.userId) || null;
      },
      actors,
      scenes,
      users,
      settings: settingsApi,
      ready: true,
    };
  }

  // The script ---------------------------------------------------------------------------------

  let state = "idle";
  let resultJson;
  let errorText = "";

  function settle(ok, value) {
    if (state !== "running") return;
    if (!ok) {
      state = "rejected";
      errorText = messageOf(value);
      return;
    }
    try {
      resultJson = stringify(value);
      state = "fulfilled";
    } catch (err) {
      state = "rejected";
      errorText = messageOf(err);
    }
  }

  const noop = () => undefined;
  const consoleApi = { log: noop, info: noop, warn: noop, error: noop, debug: noop, trace: noop };

  // Math.random from the seed the world drew for this script (mulberry32): a seeded world's
  // scripts draw the same numbers, run after run.
  function seededRandom(seed) {
    let a = seed >>> 0;
    return function random() {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  function start(init, source) {
    game = buildGame(init);
    const g = globalThis;
    if (typeof init.randomSeed === "number") Math.random = seededRandom(init.randomSeed);
    g.game = game;
    g.ChatMessage = ChatMessage;
    g.Actor = Actor;
    g.Item = Item;
    g.fromUuid = fromUuid;
    g.fromUuidSync = fromUuidSync;
    g.foundry = { utils: { getProperty, setProperty, deepClone: clone, duplicate: clone } };
    g.setTimeout = setTimeout;
    g.clearTimeout = clearTimeout;
    g.console = consoleApi;
    state = "running";
    // A macro (init.macro.scope) runs as the tabletop runs one: its body sees `speaker`, `actor`,
    // `token`, `character`, `scope` and each key of the scope (e.g. `args`) as variables.
    const names = [];
    const values = [];
    const macro = init.macro;
    if (macro !== null && typeof macro === "object") {
      const scope = macro.scope !== null && typeof macro.scope === "object" ? macro.scope : {};
      const speaker = speakerFor({});
      const actor = speaker.actor ? game.actors.get(speaker.actor) || null : null;
      names.push("speaker", "actor", "token", "character", "scope");
      values.push(speaker, actor, null, null, scope);
      for (const key of keysOf(scope)) {
        if (!names.includes(key)) {
          names.push(key);
          values.push(scope[key]);
        }
      }
    }
    let fn;
    try {
      fn = new AsyncFunction(...names, String(source));
    } catch (err) {
      settle(false, err);
      return "{}";
    }
    promiseThen.call(fn.call(undefined, ...values), (v) => settle(true, v), (e) => settle(false, e));
    return "{}";
  }

  function take() {
    const calls = queue;
    queue = [];
    const parts = [];
    for (let i = 0; i < calls.length; i++) {
      const c = calls[i];
      parts[parts.length] = `{"id":${c.id},"op":${stringify(c.op)},"args":${c.text}}`;
    }
    let nextTimer = null;
    for (const t of timers) {
      const wait = t.due - dateNow();
      if (nextTimer === null || wait < nextTimer) nextTimer = wait < 0 ? 0 : wait;
    }
    let head = `{"state":${stringify(state)},"nextTimer":${stringify(nextTimer)}`;
    if (state === "fulfilled" && resultJson !== undefined) head += `,"json":${stringify(resultJson)}`;
    if (state === "rejected") head += `,"error":${stringify(errorText)}`;
    return `${head},"calls":[${parts.join(",")}]}`;
  }

  function resolve(replies) {
    for (const reply of isArray(replies) ? replies : []) {
      const entry = waiting[reply.id];
      if (entry === undefined) continue;
      delete waiting[reply.id];
      if ("error" in reply) entry.reject(new ErrorCtor(String(reply.error)));
      else entry.resolve(reply.value);
    }
    return "{}";
  }

  function fire() {
    const now = dateNow();
    const due = timers.filter((t) => t.due <= now);
    timers = timers.filter((t) => t.due > now);
    for (const t of due) {
      try {
        t.fn(...t.args);
      } catch (_err) {
        // As in browsers, an exception in a timer callback does not end the script.
      }
    }
    return "{}";
  }

  return function control(text) {
    const message = parse(text);
    switch (message.cmd) {
      case "start":
        return start(message.init, message.source);
      case "take":
        return take();
      case "resolve":
        return resolve(message.replies);
      case "fire":
        return fire();
      default:
        throw new Error(`unknown command ${message.cmd}`);
    }
  };
})();
