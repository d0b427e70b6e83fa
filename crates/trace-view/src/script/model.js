// acp-conductor trace viewer: the records (format version 1, docs/trace.md) as a sequence
// diagram. One row per record, in the order the conductor observed them; a lifeline per
// component in chain order; between two lifelines a grey band, the conductor, where every
// message is read and written. A record read from link L ("in") is an arrow from L to the
// band on the side its message travels on; a record written to L ("out") an arrow from the
// band to L. A message crossing a proxy so reads as a staircase editor → p1 → p2 → agent.
//
// Virtualised: the canvas is one viewport high and draws only the rows in view; pairing
// (request and response on one link, by link and id), hops (mapsTo) and the per-link
// summary are indexed once, as records arrive. Records of unknown types and members are
// ignored. A machine-readable summary of what was drawn is kept in #render-report.
//
// This file: constants, the records read into rows, lanes, pairs, hops and link summaries.
// The files of script/ are one function scope in the page (page.html wraps them).

const ROW_H = 22;
const TIME_W = 92;
const DETAIL_MIN = 380;
const LANE_MIN = 96;
const LANE_MAX = 210;
const BAND_W = 12;
// Chromium caps an element's height; past this the scroll range is mapped onto the rows.
const MAX_SCROLL_PX = 8000000;
const PAYLOAD_SHOWN = 200000;

const COLOURS = {
  request: "#1d4ed8",
  response: "#047857",
  notification: "#7c3aed",
  error: "#dc2626",
  invalid: "#d97706",
};

const $ = (id) => document.getElementById(id);
const config = JSON.parse($("trace-config").textContent);
const t0Parse = performance.now();
const initial = JSON.parse($("trace-data").textContent);
const parseMs = performance.now() - t0Parse;
$("trace-data").textContent = ""; // the parsed records are all that is kept

// ---------------------------------------------------------------- model

const M = {
  header: null,
  records: 0, // every record read, the header included: a row's `i` counts these
  lanes: [], // {name, role, position, kind, group, idx, declared}
  laneOf: new Map(),
  rows: [], // messages, component events, the end
  messages: 0,
  events: 0,
  ended: null,
  pairs: 0,
  hops: 0,
  open: new Map(), // link \x01 dir \x01 id -> row of a request awaiting its response
  outSeen: new Map(), // r|q \x01 link \x01 id -> an "out" row no "in" row points at yet
  wanted: new Map(), // r|q \x01 link \x01 id -> an "in" row whose mapsTo was not seen yet
  through: new Map(), // proxy \x01 method \x01 session -> requests written to it, not yet passed on
  passedOn: 0,
  outRequests: new Map(), // link \x01 id -> the last request written to that link with that id
  dropped: 0, // message records the writer left out, by its own count
  methods: new Map(),
  sessions: new Map(),
  links: new Map(), // link -> {messages, bytes, requests, latencies[]}
  firstNumbered: -1,
  lastNumbered: -1,
};

function idKey(id) {
  return JSON.stringify(id);
}

function isResponse(kind) {
  return kind === "response" || kind === "error";
}

function laneFor(name, position) {
  let lane = M.laneOf.get(name);
  if (lane) {
    if (lane.position == null && typeof position === "number") {
      lane.position = position;
      lane.group = 0;
      orderLanes();
    }
    return lane;
  }
  const shim = name.startsWith("shim:");
  lane = {
    name,
    role: shim ? "mcp bridge" : null,
    position: typeof position === "number" ? position : null,
    kind: null,
    group: typeof position === "number" && !shim ? 0 : 1,
    idx: 0,
    declared: false,
    seen: M.lanes.length,
  };
  M.lanes.push(lane);
  M.laneOf.set(name, lane);
  orderLanes();
  return lane;
}

// Chain order: declared or numbered positions first, then links without one (bridge
// connections), in the order they were first seen.
function orderLanes() {
  M.lanes.sort(
    (a, b) =>
      a.group - b.group ||
      (a.group === 0 ? a.position - b.position : 0) ||
      a.seen - b.seen
  );
  M.firstNumbered = -1;
  M.lastNumbered = -1;
  M.lanes.forEach((lane, i) => {
    lane.idx = i;
    if (lane.group === 0) {
      if (M.firstNumbered < 0) M.firstNumbered = i;
      M.lastNumbered = i;
    }
  });
  const maxPos = M.lastNumbered >= 0 ? M.lanes[M.lastNumbered].position : -1;
  for (const lane of M.lanes) {
    if (lane.declared || lane.group !== 0) continue;
    lane.role =
      lane.position === 0 ? "editor" : lane.position === maxPos ? "agent" : "proxy";
  }
  layoutDirty = true;
}

function onHeader(rec) {
  if (M.header) return;
  M.header = rec;
  const comps = Array.isArray(rec.components) ? rec.components : [];
  for (const c of comps) {
    if (!c || typeof c.name !== "string") continue;
    const lane = laneFor(c.name, typeof c.position === "number" ? c.position : null);
    lane.declared = true;
    lane.role = typeof c.role === "string" ? c.role : lane.role;
    lane.kind = typeof c.kind === "string" ? c.kind : null;
  }
  orderLanes();
}

function linkStats(link) {
  let s = M.links.get(link);
  if (!s) {
    s = { messages: 0, bytes: 0, requests: 0, latencies: [] };
    M.links.set(link, s);
  }
  return s;
}

function onMessage(rec, i) {
  if (typeof rec.link !== "string") return null;
  const lane = laneFor(rec.link, rec.position);
  const kind = ["request", "notification", "response", "error", "invalid"].includes(rec.kind)
    ? rec.kind
    : "invalid";
  const row = {
    i,
    type: "m",
    t: typeof rec.t === "number" ? rec.t : NaN,
    lane,
    dirIn: rec.dir === "in",
    kind,
    method: typeof rec.method === "string" ? rec.method : null,
    wrapped: typeof rec.wrapped === "string" ? rec.wrapped : null,
    id: rec.id === undefined ? null : rec.id,
    mapsTo: rec.mapsTo && typeof rec.mapsTo.link === "string" ? rec.mapsTo : null,
    cancels: rec.cancels && typeof rec.cancels.link === "string" ? rec.cancels : null,
    session: typeof rec.session === "string" ? rec.session : null,
    bytes: typeof rec.bytes === "number" ? rec.bytes : 0,
    payload: rec.payload,
    pair: -1,
    next: -1,
    prev: -1,
    // Inferred, not recorded: the request a proxy sent on after this one was written to it.
    thru: -1,
    thruFrom: -1,
  };
  const r = M.rows.length;
  M.rows.push(row);
  M.messages++;

  const stats = linkStats(rec.link);
  stats.messages++;
  stats.bytes += row.bytes;

  // Request and response on one link: the response comes the other way, same id.
  if (row.id !== null && (kind === "request" || isResponse(kind))) {
    const key = rec.link + "\x01" + idKey(row.id);
    if (kind === "request") {
      stats.requests++;
      M.open.set((row.dirIn ? "i" : "o") + key, r);
      if (!row.dirIn) M.outRequests.set(key, r);
    } else {
      const reqKey = (row.dirIn ? "o" : "i") + key;
      const q = M.open.get(reqKey);
      if (q !== undefined) {
        M.open.delete(reqKey);
        const req = M.rows[q];
        req.pair = r;
        row.pair = q;
        M.pairs++;
        if (!row.method) row.method = req.method;
        if (!row.session) row.session = req.session;
        const latency = row.t - req.t;
        if (latency >= 0) stats.latencies.push(latency);
        stats.sorted = null;
        // Answered before a proxy passed it on: it never will be.
        if (!req.dirIn && req.thru < 0) forgetPassThrough(req, q);
      }
    }
    // Hop to hop: an "in" record names the record it became on the next link.
    const cls = kind === "request" ? "q" : "r";
    if (row.dirIn && row.mapsTo) {
      const target = cls + "\x01" + row.mapsTo.link + "\x01" + idKey(row.mapsTo.id);
      const out = M.outSeen.get(target);
      if (out !== undefined) {
        M.outSeen.delete(target);
        link(r, out);
      } else {
        M.wanted.set(target, r);
      }
    } else if (!row.dirIn) {
      const self = cls + "\x01" + rec.link + "\x01" + idKey(row.id);
      const from = M.wanted.get(self);
      if (from !== undefined) {
        M.wanted.delete(self);
        link(from, r);
      } else {
        M.outSeen.set(self, r);
      }
    }
  }
  if (kind === "request") passThrough(row, r);
  if (row.method) M.methods.set(row.method, (M.methods.get(row.method) || 0) + 1);
  if (row.session) M.sessions.set(row.session, (M.sessions.get(row.session) || 0) + 1);
  return row;
}

// What a proxy does inside is not in the trace; a request it sends on toward the other
// side with the same method and session, while one written to it waits, is taken as that
// one passed on (first come, first matched). Shown as inferred.
function passThrough(row, r) {
  // Only proxies pass requests on. Position 0 (the editor, or the parent conductor) is left
  // out by position; the agent by the wrapping rule below, as what reaches it and what it
  // sends are both plain (without a header the lanes seen so far do not say yet which one
  // is the agent).
  if (row.lane.group !== 0 || row.lane.position === 0) return;
  const key = throughKey(row);
  if (!row.dirIn) {
    let queue = M.through.get(key);
    if (!queue) M.through.set(key, (queue = []));
    queue.push(r);
    return;
  }
  const queue = M.through.get(key);
  if (!queue) return;
  // Passing on turns the message around the proxy: what came from the predecessor plain
  // leaves toward the successor wrapped, and the other way.
  const at = queue.findIndex((q) => !M.rows[q].wrapped !== !row.wrapped);
  if (at < 0) return;
  const q = queue.splice(at, 1)[0];
  M.rows[q].thru = r;
  row.thruFrom = q;
  M.passedOn++;
}

function throughKey(row) {
  return row.lane.name + "\x01" + String(row.method).replace(/^_?proxy\//, "") + "\x01" + (row.session || "");
}

function forgetPassThrough(row, r) {
  const queue = M.through.get(throughKey(row));
  const at = queue ? queue.indexOf(r) : -1;
  if (at >= 0) queue.splice(at, 1);
}

function link(from, to) {
  M.rows[from].next = to;
  M.rows[to].prev = from;
  M.hops++;
}

function onComponent(rec, i) {
  if (typeof rec.link !== "string") return null;
  const row = {
    i,
    type: "c",
    t: typeof rec.t === "number" ? rec.t : NaN,
    lane: laneFor(rec.link, undefined),
    event: typeof rec.event === "string" ? rec.event : "event",
    detail: typeof rec.detail === "string" ? rec.detail : "",
    pair: -1,
    next: -1,
    prev: -1,
  };
  M.rows.push(row);
  M.events++;
  return row;
}

function onEnd(rec, i) {
  const row = {
    i,
    type: "e",
    t: typeof rec.t === "number" ? rec.t : NaN,
    lane: null,
    reason: typeof rec.reason === "string" ? rec.reason : "",
    pair: -1,
    next: -1,
    prev: -1,
  };
  M.ended = row;
  if (typeof rec.dropped === "number") M.dropped = Math.max(M.dropped, rec.dropped);
  M.rows.push(row);
  return row;
}

/** Takes records in; returns the rows they added. */
function ingest(records) {
  const added = [];
  for (const rec of records) {
    const i = M.records++;
    if (!rec || typeof rec !== "object") continue;
    let row = null;
    if (rec.type === "header") onHeader(rec);
    else if (rec.type === "message") row = onMessage(rec, i);
    else if (rec.type === "component") row = onComponent(rec, i);
    else if (rec.type === "end") row = onEnd(rec, i);
    else if (rec.type === "dropped" && typeof rec.total === "number") M.dropped = Math.max(M.dropped, rec.total);
    if (row) added.push(M.rows.length - 1);
  }
  return added;
}

// Which side of lane L the conductor's band is for this row: +1 toward the agent,
// -1 toward the editor. Hops decide when known, then the pairing, then the chain rules
// (the editor only talks toward the agent, the agent toward the editor, a proxy toward its
// successor only wrapped).
function sideOf(row, depth) {
  const L = row.lane;
  if (L.group !== 0) return -1;
  const other = row.dirIn ? row.next : row.prev;
  if (other >= 0) {
    const O = M.rows[other].lane;
    if (O !== L && O.group === 0) return O.idx > L.idx ? 1 : -1;
  }
  if (row.dirIn && row.mapsTo) {
    const O = M.laneOf.get(row.mapsTo.link);
    if (O && O !== L && O.group === 0) return O.idx > L.idx ? 1 : -1;
  }
  if (isResponse(row.kind) && row.pair >= 0 && !depth) return sideOf(M.rows[row.pair], 1);
  if (L.idx === M.firstNumbered) return 1;
  if (L.idx === M.lastNumbered) return -1;
  return row.wrapped ? 1 : -1;
}
