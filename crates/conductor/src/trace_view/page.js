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
"use strict";
(function () {
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

  // ---------------------------------------------------------------- view state

  const scroller = $("scroller");
  const canvas = $("canvas");
  const spacer = $("spacer");
  const heads = $("heads");
  const ctx = canvas.getContext("2d");
  const methodSelect = $("filter-method");
  const sessionSelect = $("filter-session");

  let view = null; // null: every row; else an array of row indices
  let filter = { method: "", session: "" };
  let selected = -1; // row index
  let hovered = -1;
  let highlight = new Set(); // rows of the selected message's path
  let layoutDirty = true;
  let geo = null;
  let lastDraw = { arrows: 0, byKind: {}, drawn: [], first: 0, count: 0 };
  let frameQueued = false;

  function viewLength() {
    return view ? view.length : M.rows.length;
  }
  function rowAt(v) {
    return view ? view[v] : v;
  }
  function viewIndexOf(r) {
    if (!view) return r;
    let lo = 0;
    let hi = view.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (view[mid] === r) return mid;
      if (view[mid] < r) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  function matches(row) {
    if (!filter.method && !filter.session) return true;
    if (row.type !== "m") return false;
    if (filter.method && row.method !== filter.method) return false;
    if (filter.session && row.session !== filter.session) return false;
    return true;
  }

  function applyFilter() {
    filter = { method: methodSelect.value, session: sessionSelect.value };
    if (!filter.method && !filter.session) {
      view = null;
    } else {
      view = [];
      for (let r = 0; r < M.rows.length; r++) if (matches(M.rows[r])) view.push(r);
    }
    sizeSpacer();
    if (selected >= 0 && viewIndexOf(selected) >= 0) scrollToRow(selected);
    else scroller.scrollTop = 0;
    updateShown();
    draw();
    publishReport();
  }

  function fillSelect(select, entries, label) {
    const current = select.value;
    const sorted = [...entries].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    const options = [new Option("all", "")];
    for (const [name, count] of sorted) options.push(new Option(label(name) + " (" + count + ")", name));
    select.replaceChildren(...options);
    select.value = current;
  }

  function updateFilters() {
    fillSelect(methodSelect, M.methods, (m) => m);
    fillSelect(sessionSelect, M.sessions, (s) => s);
  }

  function updateShown() {
    const n = viewLength();
    $("shown").textContent = view
      ? n.toLocaleString("en") + " of " + M.rows.length.toLocaleString("en") + " rows"
      : n.toLocaleString("en") + " rows";
  }

  // ---------------------------------------------------------------- layout

  function layout() {
    const dpr = window.devicePixelRatio || 1;
    const w = scroller.clientWidth;
    const h = scroller.clientHeight;
    const n = Math.max(M.lanes.length, 1);
    const laneW = Math.max(LANE_MIN, Math.min(LANE_MAX, Math.floor((w - TIME_W - DETAIL_MIN) / n)));
    geo = {
      w,
      h,
      laneW,
      detailX: TIME_W + laneW * n + 12,
      dpr,
    };
    if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
      canvas.width = Math.round(w * dpr);
      canvas.height = Math.round(h * dpr);
      canvas.style.width = w + "px";
      canvas.style.height = h + "px";
    }
    sizeSpacer();
    drawHeads();
    layoutDirty = false;
  }

  function laneX(idx) {
    return TIME_W + geo.laneW * (idx + 0.5);
  }
  // The conductor's band between lane g and lane g + 1.
  function bandX(g) {
    return TIME_W + geo.laneW * (g + 1);
  }

  function drawHeads() {
    const els = [];
    for (const lane of M.lanes) {
      const el = document.createElement("div");
      el.className = "lifeline role-" + String(lane.role || "unknown").replace(/[^a-z]/g, "");
      el.dataset.link = lane.name;
      el.style.left = laneX(lane.idx) - geo.laneW / 2 + "px";
      el.style.width = geo.laneW + "px";
      const name = document.createElement("div");
      name.className = "name";
      name.textContent = lane.name;
      name.title = lane.name;
      const role = document.createElement("div");
      role.className = "role";
      role.textContent = [lane.role === lane.name ? "" : lane.role || "link", lane.kind].filter(Boolean).join(" · ");
      el.append(name, role);
      els.push(el);
    }
    for (let g = 0; g + 1 < M.lanes.length; g++) {
      const el = document.createElement("div");
      el.className = "band-head";
      el.style.left = bandX(g) - BAND_W / 2 + "px";
      el.style.width = BAND_W + "px";
      el.title = "the conductor";
      els.push(el);
    }
    const t = document.createElement("div");
    t.className = "time-head";
    t.textContent = "ms";
    const d = document.createElement("div");
    d.className = "detail-head";
    d.style.left = geo.detailX + "px";
    d.textContent = "message · id → next hop";
    els.push(t, d);
    heads.replaceChildren(...els);
  }

  function totalPx() {
    return viewLength() * ROW_H;
  }
  function scrollRange() {
    return Math.min(totalPx(), MAX_SCROLL_PX);
  }
  function sizeSpacer() {
    const h = geo ? geo.h : scroller.clientHeight;
    spacer.style.height = Math.max(0, scrollRange() - h) + "px";
  }
  // The pixel offset of the rows at the top of the viewport.
  function topPx() {
    const maxScroll = scrollRange() - geo.h;
    const maxTop = totalPx() - geo.h;
    if (maxScroll <= 0) return 0;
    return Math.min(maxTop, (scroller.scrollTop / maxScroll) * maxTop);
  }
  function scrollToRow(r) {
    const v = viewIndexOf(r);
    if (v < 0) return;
    if (layoutDirty || !geo) layout();
    const maxTop = totalPx() - geo.h;
    const maxScroll = scrollRange() - geo.h;
    if (maxTop <= 0 || maxScroll <= 0) return;
    const want = v * ROW_H - geo.h / 2 + ROW_H / 2;
    const top = Math.max(0, Math.min(maxTop, want));
    scroller.scrollTop = (top / maxTop) * maxScroll;
  }
  function rowIsVisible(r) {
    const v = viewIndexOf(r);
    if (v < 0) return false;
    const top = topPx();
    return v * ROW_H >= top && (v + 1) * ROW_H <= top + geo.h;
  }

  // ---------------------------------------------------------------- drawing

  function queueDraw() {
    if (frameQueued) return;
    frameQueued = true;
    requestAnimationFrame(() => {
      frameQueued = false;
      draw();
    });
  }

  function fmtMs(t) {
    if (!isFinite(t)) return "";
    return t >= 100000 ? t.toFixed(0) : t >= 1000 ? t.toFixed(1) : t.toFixed(3);
  }

  function fmtId(id) {
    return id === null || id === undefined ? "" : typeof id === "string" ? JSON.stringify(id) : String(id);
  }

  function shortSession(s) {
    return s.length > 14 ? s.slice(0, 6) + "…" + s.slice(-6) : s;
  }

  function arrowEnds(row) {
    const L = row.lane.idx;
    let side = sideOf(row, 0);
    if (side < 0 && L === 0) side = 1;
    if (side > 0 && L === M.lanes.length - 1) side = -1;
    const lx = laneX(L);
    const bx = bandX(side > 0 ? L : L - 1);
    const via = M.lanes[L + side] ? M.lanes[L + side].name : null;
    return row.dirIn ? { x1: lx, x2: bx, side, via } : { x1: bx, x2: lx, side, via };
  }

  function draw() {
    if (layoutDirty || !geo) layout();
    const { w, h, dpr } = geo;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, h);
    const top = topPx();
    const n = viewLength();
    const first = Math.max(0, Math.floor(top / ROW_H));
    const last = Math.min(n - 1, Math.floor((top + h) / ROW_H));
    const offset = first * ROW_H - top;

    // Row backgrounds.
    for (let v = first; v <= last; v++) {
      const r = rowAt(v);
      const row = M.rows[r];
      const y = offset + (v - first) * ROW_H;
      let bg = null;
      if (r === selected) bg = "#fde68a";
      else if (highlight.has(r)) bg = "#fef3c7";
      else if (row.type === "m" && row.kind === "error") bg = "#fee2e2";
      else if (r === hovered) bg = "#f1f5f9";
      else if ((v & 1) === 1) bg = "#fafafa";
      if (bg) {
        ctx.fillStyle = bg;
        ctx.fillRect(0, y, w, ROW_H);
      }
    }

    // The conductor's bands and the lifelines.
    ctx.fillStyle = "#eef2f7";
    for (let g = 0; g + 1 < M.lanes.length; g++) ctx.fillRect(bandX(g) - BAND_W / 2, 0, BAND_W, h);
    ctx.strokeStyle = "#94a3b8";
    ctx.lineWidth = 1;
    ctx.setLineDash([3, 3]);
    ctx.beginPath();
    for (const lane of M.lanes) {
      const x = Math.round(laneX(lane.idx)) + 0.5;
      ctx.moveTo(x, 0);
      ctx.lineTo(x, h);
    }
    ctx.stroke();
    ctx.setLineDash([]);

    const byKind = { request: 0, response: 0, notification: 0, error: 0, invalid: 0 };
    const drawn = [];
    let arrows = 0;
    ctx.font = "11px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace";
    ctx.textBaseline = "middle";
    for (let v = first; v <= last; v++) {
      const r = rowAt(v);
      const row = M.rows[r];
      const y = offset + (v - first) * ROW_H;
      const cy = Math.round(y + ROW_H / 2) + 0.5;
      ctx.fillStyle = "#64748b";
      ctx.textAlign = "right";
      ctx.fillText(fmtMs(row.t), TIME_W - 10, cy);
      ctx.textAlign = "left";
      if (row.type === "m") {
        const ends = arrowEnds(row);
        drawArrow(row, ends, cy);
        arrows++;
        byKind[row.kind]++;
        if (drawn.length < 80) {
          drawn.push({
            record: row.i,
            link: row.lane.name,
            dir: row.dirIn ? "in" : "out",
            kind: row.kind,
            method: row.method,
            from: row.dirIn ? row.lane.name : "conductor",
            to: row.dirIn ? "conductor" : row.lane.name,
            via: ends.via,
          });
        }
        drawDetail(row, cy);
      } else if (row.type === "c") {
        drawEvent(row, cy);
      } else {
        ctx.fillStyle = "#334155";
        ctx.fillText("end · " + row.reason, TIME_W + 8, cy);
      }
    }
    drawPairBracket(first, last, offset, top);
    lastDraw = { arrows, byKind, drawn, first, count: last - first + 1 };
  }

  function drawArrow(row, ends, cy) {
    const colour = COLOURS[row.kind];
    const { x1, x2 } = ends;
    const dir = x2 > x1 ? 1 : -1;
    const head = 7;
    ctx.strokeStyle = colour;
    ctx.fillStyle = colour;
    ctx.lineWidth = row.kind === "request" || row.kind === "error" ? 1.6 : 1.2;
    if (row.kind === "response" || row.kind === "error") ctx.setLineDash([5, 3]);
    else if (row.kind === "invalid") ctx.setLineDash([2, 2]);
    ctx.beginPath();
    ctx.moveTo(x1, cy);
    ctx.lineTo(x2 - dir * (row.kind === "notification" ? 1 : head), cy);
    ctx.stroke();
    ctx.setLineDash([]);
    ctx.beginPath();
    ctx.moveTo(x2, cy);
    ctx.lineTo(x2 - dir * head, cy - 4);
    if (row.kind === "notification") {
      // Open arrowhead: nothing waits for an answer.
      ctx.moveTo(x2, cy);
      ctx.lineTo(x2 - dir * head, cy + 4);
      ctx.stroke();
    } else {
      ctx.lineTo(x2 - dir * head, cy + 4);
      ctx.closePath();
      ctx.fill();
    }
    if (row.wrapped) {
      // An envelope at the tail: the message travels inside proxy/successor.
      ctx.lineWidth = 1;
      ctx.strokeRect(x1 - 4 + dir * 3, cy - 3.5, 8, 7);
    }
    if (row.kind === "error" || row.kind === "invalid") {
      const mx = (x1 + x2) / 2;
      ctx.lineWidth = 2;
      ctx.beginPath();
      ctx.moveTo(mx - 3.5, cy - 3.5);
      ctx.lineTo(mx + 3.5, cy + 3.5);
      ctx.moveTo(mx + 3.5, cy - 3.5);
      ctx.lineTo(mx - 3.5, cy + 3.5);
      ctx.stroke();
    }
    // The id as seen on this link, by the lifeline.
    if (row.id !== null) {
      const lx = row.dirIn ? x1 : x2;
      const side = x2 > x1 === row.dirIn ? 1 : -1; // toward the band
      const text = "#" + fmtId(row.id);
      ctx.fillStyle = colour;
      ctx.textAlign = side > 0 ? "left" : "right";
      ctx.fillText(text.length > 10 ? text.slice(0, 9) + "…" : text, lx + side * 4, cy - 6.5);
      ctx.textAlign = "left";
    }
  }

  function detailText(row) {
    let text = "";
    if (isResponse(row.kind)) text += row.kind === "error" ? "✕ " : "↩ ";
    else if (row.kind === "notification") text += "◦ ";
    else if (row.kind === "invalid") text += "! ";
    text += row.method || (row.kind === "invalid" ? "invalid" : "?");
    if (row.wrapped) text += " □";
    if (row.id !== null) text += "  #" + fmtId(row.id);
    if (row.dirIn && row.mapsTo) text += " → " + row.mapsTo.link + " #" + fmtId(row.mapsTo.id);
    if (row.cancels) text += " ⊘ " + row.cancels.link + " #" + fmtId(row.cancels.id);
    if (row.pair >= 0 && isResponse(row.kind)) {
      const latency = row.t - M.rows[row.pair].t;
      if (isFinite(latency)) text += "  " + fmtMs(latency) + " ms";
    }
    return text;
  }

  function drawDetail(row, cy) {
    const x = geo.detailX;
    let right = row.bytes + " B";
    if (row.session) right = shortSession(row.session) + "  " + right;
    ctx.fillStyle = "#94a3b8";
    ctx.textAlign = "right";
    ctx.fillText(right, geo.w - 8, cy);
    ctx.textAlign = "left";
    ctx.fillStyle = row.kind === "error" ? COLOURS.error : "#0f172a";
    const room = geo.w - 8 - x - (right.length + 2) * charWidth();
    ctx.fillText(clip(detailText(row), room), x, cy);
  }

  // Cuts text to `room` pixels (monospace: one measurement per font).
  let charW = 0;
  function charWidth() {
    if (!charW) charW = ctx.measureText("0000000000").width / 10;
    return charW;
  }
  function clip(text, room) {
    const max = Math.floor(room / charWidth());
    return text.length > max ? text.slice(0, Math.max(0, max - 1)) + "…" : text;
  }

  function drawEvent(row, cy) {
    const x = laneX(row.lane.idx);
    const failed = row.event === "failed" || row.event === "exited";
    const text = row.event + (row.detail ? ": " + row.detail : "");
    ctx.fillStyle = failed ? "#fee2e2" : "#e2e8f0";
    ctx.strokeStyle = failed ? COLOURS.error : "#64748b";
    const label = clip(text, geo.w - x - 20);
    const tw = ctx.measureText(label).width + 10;
    ctx.beginPath();
    ctx.rect(x - 5, cy - 8, tw, 16);
    ctx.fill();
    ctx.stroke();
    ctx.fillStyle = failed ? COLOURS.error : "#334155";
    ctx.fillText(label, x, cy);
  }

  // A bracket in the time column from the selected row to its request or response.
  function drawPairBracket(first, last, offset, top) {
    if (selected < 0) return;
    const a = M.rows[selected];
    if (a.pair < 0) return;
    const va = viewIndexOf(selected);
    const vb = viewIndexOf(a.pair);
    if (va < 0 || vb < 0) return;
    const yOf = (v) => v * ROW_H - top + ROW_H / 2;
    const ya = yOf(va);
    const yb = yOf(vb);
    const lo = Math.max(-2, Math.min(ya, yb));
    const hi = Math.min(geo.h + 2, Math.max(ya, yb));
    if (hi < 0 || lo > geo.h) return;
    const x = 8.5;
    ctx.strokeStyle = "#b45309";
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.moveTo(x + 6, lo);
    ctx.lineTo(x, lo);
    ctx.lineTo(x, hi);
    ctx.lineTo(x + 6, hi);
    ctx.stroke();
    if (!rowIsVisible(a.pair)) {
      ctx.fillStyle = "#b45309";
      ctx.fillText(vb > va ? "▼" : "▲", x + 4, vb > va ? geo.h - 8 : 8);
    }
  }

  // ---------------------------------------------------------------- selection

  // The message's every hop and its answer's: everything joined to it by a hop (mapsTo), a
  // pass through a proxy (inferred) or a pairing, up to a bound.
  function pathOf(r) {
    const set = new Set([r]);
    const queue = [r];
    while (queue.length && set.size < 512) {
      const row = M.rows[queue.shift()];
      for (const other of [row.prev, row.next, row.pair, row.thru, row.thruFrom]) {
        if (other !== undefined && other >= 0 && !set.has(other)) {
          set.add(other);
          queue.push(other);
        }
      }
    }
    set.delete(r);
    return set;
  }

  function select(r, opts) {
    selected = r;
    highlight = r >= 0 ? pathOf(r) : new Set();
    if (r >= 0 && opts && opts.scroll && !rowIsVisible(r)) scrollToRow(r);
    showDetails();
    draw();
    publishReport();
  }

  function jumpToPair() {
    if (selected < 0) return;
    const p = M.rows[selected].pair;
    if (p >= 0 && viewIndexOf(p) >= 0) select(p, { scroll: true });
  }

  function rowLabel(r) {
    const row = M.rows[r];
    return row.lane.name + " " + (row.dirIn ? "in" : "out") + (row.id !== null ? " #" + fmtId(row.id) : "");
  }

  function navButton(text, r, title) {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = text;
    b.title = title || "";
    b.dataset.row = String(r);
    if (viewIndexOf(r) < 0) {
      b.disabled = true;
      b.title = "hidden by the filter";
    }
    b.addEventListener("click", () => select(r, { scroll: true }));
    return b;
  }

  function showDetails() {
    const box = $("details");
    if (selected < 0) {
      box.replaceChildren();
      return;
    }
    const row = M.rows[selected];
    const h = document.createElement("h2");
    const dl = document.createElement("dl");
    const add = (k, v) => {
      if (v === null || v === undefined || v === "") return;
      const dt = document.createElement("dt");
      dt.textContent = k;
      const dd = document.createElement("dd");
      dd.textContent = v;
      dl.append(dt, dd);
    };
    const parts = [h, dl];
    if (row.type === "m") {
      h.className = "kind-" + row.kind;
      h.textContent = row.kind + " · " + (row.method || "?");
      add("record", "#" + row.i + " at " + fmtMs(row.t) + " ms");
      add(
        "link",
        row.lane.name + (row.dirIn ? " → conductor (in)" : " ← conductor (out)")
      );
      add("id", row.id !== null ? fmtId(row.id) : null);
      if (row.mapsTo) add("maps to", row.mapsTo.link + " #" + fmtId(row.mapsTo.id));
      if (row.cancels) add("cancels", row.cancels.link + " #" + fmtId(row.cancels.id));
      add("wrapped", row.wrapped);
      add("session", row.session);
      add("bytes", String(row.bytes));
      const nav = document.createElement("div");
      nav.className = "nav";
      if (row.pair >= 0) {
        const p = M.rows[row.pair];
        const latency = Math.abs(p.t - row.t);
        nav.append(
          navButton(
            (isResponse(row.kind) ? "⇡ its request" : p.kind === "error" ? "⇣ its error" : "⇣ its response") +
              " (" + fmtMs(latency) + " ms)",
            row.pair,
            "same link, same id"
          )
        );
      } else if (row.kind === "request") {
        const span = document.createElement("span");
        span.className = "muted";
        span.textContent = "no response in the trace";
        nav.append(span);
      }
      if (row.prev >= 0) nav.append(navButton("← came from " + rowLabel(row.prev), row.prev, "the previous hop"));
      if (row.next >= 0) nav.append(navButton("→ went on as " + rowLabel(row.next), row.next, "the next hop"));
      if (row.cancels) {
        const c = M.outRequests.get(row.cancels.link + "\x01" + idKey(row.cancels.id));
        if (c !== undefined && c < selected) nav.append(navButton("⊘ the request it cancels", c, row.cancels.link + " #" + fmtId(row.cancels.id)));
      }
      if (row.thruFrom >= 0)
        nav.append(navButton("← passed on from " + rowLabel(row.thruFrom) + " (inferred)", row.thruFrom, "same method and session, the request written to this proxy before"));
      if (row.thru >= 0)
        nav.append(navButton("→ passed on as " + rowLabel(row.thru) + " (inferred)", row.thru, "same method and session, the next request this proxy sent the other way"));
      parts.push(nav);
      const pre = document.createElement("pre");
      pre.className = "payload";
      pre.id = "payload";
      if (row.payload === undefined) {
        pre.textContent = "(payload not recorded: trace_payloads = false)";
      } else {
        const text = JSON.stringify(row.payload, null, 2);
        if (text.length > PAYLOAD_SHOWN) {
          pre.textContent = text.slice(0, PAYLOAD_SHOWN) + "\n… " + (text.length - PAYLOAD_SHOWN) + " more characters";
          const more = document.createElement("button");
          more.type = "button";
          more.textContent = "show all";
          more.addEventListener("click", () => {
            pre.textContent = text;
            more.remove();
          });
          parts.push(more);
        } else {
          colourJson(pre, text);
        }
      }
      parts.push(pre);
    } else if (row.type === "c") {
      h.textContent = "component · " + row.event;
      add("record", "#" + row.i + " at " + fmtMs(row.t) + " ms");
      add("link", row.lane.name);
      add("detail", row.detail);
    } else {
      h.textContent = "end";
      add("at", fmtMs(row.t) + " ms");
      add("reason", row.reason);
    }
    box.replaceChildren(...parts);
  }

  // Pretty-printed JSON with keys, strings and numbers told apart.
  function colourJson(pre, text) {
    const frag = document.createDocumentFragment();
    const re = /("(?:[^"\\]|\\.)*")(\s*:)?|\b(true|false|null)\b|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/g;
    let last = 0;
    let m;
    while ((m = re.exec(text)) !== null) {
      if (m.index > last) frag.append(text.slice(last, m.index));
      const span = document.createElement("span");
      span.className = m[1] ? (m[2] ? "k" : "s") : m[3] ? "b" : "n";
      span.textContent = m[1] || m[0];
      frag.append(span);
      if (m[2]) frag.append(m[2]);
      last = re.lastIndex;
    }
    frag.append(text.slice(last));
    pre.replaceChildren(frag);
  }

  // ---------------------------------------------------------------- summary

  function p50(stats) {
    if (!stats.latencies.length) return null;
    if (!stats.sorted) stats.sorted = Float64Array.from(stats.latencies).sort();
    const s = stats.sorted;
    const mid = s.length >> 1;
    return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
  }

  function fmtBytes(b) {
    return b >= 1048576 ? (b / 1048576).toFixed(1) + " MiB" : b >= 1024 ? (b / 1024).toFixed(1) + " KiB" : b + " B";
  }

  function linkSummary() {
    const out = [];
    const names = M.lanes.map((l) => l.name).filter((n) => M.links.has(n));
    for (const name of names) {
      const s = M.links.get(name);
      out.push({ link: name, messages: s.messages, bytes: s.bytes, requests: s.requests, answered: s.latencies.length, p50Ms: p50(s) });
    }
    return out;
  }

  function updateSummary() {
    const body = $("summary-table").tBodies[0];
    const rows = linkSummary().map((s) => {
      const tr = document.createElement("tr");
      tr.dataset.link = s.link;
      for (const v of [
        s.link,
        s.messages.toLocaleString("en"),
        fmtBytes(s.bytes),
        s.requests.toLocaleString("en"),
        s.p50Ms === null ? "–" : fmtMs(s.p50Ms) + " ms",
      ]) {
        const td = document.createElement("td");
        td.textContent = v;
        tr.append(td);
      }
      return tr;
    });
    body.replaceChildren(...rows);
    const meta = [];
    if (M.header && typeof M.header.startedAt === "string") meta.push("started " + M.header.startedAt);
    if (M.header && typeof M.header.conductor === "string") meta.push("conductor " + M.header.conductor);
    if (!M.header) meta.push("no header: components inferred from the links");
    meta.push(M.messages.toLocaleString("en") + " messages");
    if (M.dropped) meta.push(M.dropped.toLocaleString("en") + " message records dropped by the writer");
    if (M.ended) meta.push("ended: " + M.ended.reason);
    $("trace-meta").textContent = "· " + meta.join(" · ");
  }

  // ---------------------------------------------------------------- report

  const timings = { parseMs };
  let bench = null;
  let selftest = null;

  // The selected row, its pair, and every hop of its message and of the answer.
  function selectionReport() {
    const row = M.rows[selected];
    const path = [selected, ...highlight]
      .sort((a, b) => a - b)
      .map((r) => M.rows[r])
      .filter((p) => p.type === "m")
      .map((p) => ({ record: p.i, link: p.lane.name, dir: p.dirIn ? "in" : "out", kind: p.kind, method: p.method, via: arrowEnds(p).via }));
    return { record: row.i, pair: row.pair >= 0 ? M.rows[row.pair].i : null, path };
  }

  function publishReport() {
    const report = {
      format: M.header ? M.header.format || null : null,
      version: M.header ? M.header.version || null : null,
      header: !!M.header,
      records: M.records,
      messages: M.messages,
      componentEvents: M.events,
      ended: M.ended ? M.ended.reason : null,
      lifelines: M.lanes.map((l) => ({ name: l.name, role: l.role, position: l.position })),
      lifelineElements: heads.querySelectorAll(".lifeline").length,
      rows: viewLength(),
      firstVisibleRow: lastDraw.first,
      visibleRows: lastDraw.count,
      arrowsDrawn: lastDraw.arrows,
      arrowsByKind: lastDraw.byKind,
      drawn: lastDraw.drawn,
      pairs: M.pairs,
      unanswered: M.open.size,
      hops: M.hops,
      passedOn: M.passedOn,
      dropped: M.dropped,
      links: linkSummary(),
      methods: M.methods.size,
      sessions: [...M.sessions.keys()],
      filter,
      selected: selected >= 0 ? selectionReport() : null,
      timings,
      bench,
      selftest,
      live: config.live ? { next: liveNext, generation: liveGeneration } : null,
    };
    $("render-report").textContent = JSON.stringify(report);
  }

  // ---------------------------------------------------------------- input

  function rowAtY(clientY) {
    const rect = canvas.getBoundingClientRect();
    const v = Math.floor((topPx() + clientY - rect.top) / ROW_H);
    return v >= 0 && v < viewLength() ? rowAt(v) : -1;
  }

  canvas.addEventListener("click", (e) => {
    const r = rowAtY(e.clientY);
    if (r < 0) return;
    if (r === selected && M.rows[r].pair >= 0) jumpToPair();
    else select(r);
    scroller.focus({ preventScroll: true });
  });
  canvas.addEventListener("mousemove", (e) => {
    const r = rowAtY(e.clientY);
    if (r !== hovered) {
      hovered = r;
      canvas.style.cursor = r >= 0 ? "pointer" : "default";
      queueDraw();
    }
  });
  canvas.addEventListener("mouseleave", () => {
    hovered = -1;
    queueDraw();
  });
  scroller.addEventListener("scroll", queueDraw, { passive: true });
  scroller.addEventListener("keydown", (e) => {
    const n = viewLength();
    if (!n) return;
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      const v = selected >= 0 ? viewIndexOf(selected) : -1;
      const next = Math.max(0, Math.min(n - 1, v + (e.key === "ArrowDown" ? 1 : -1)));
      select(rowAt(next), { scroll: true });
      e.preventDefault();
    } else if (e.key === "Enter" || e.key === "p") {
      jumpToPair();
      e.preventDefault();
    } else if (e.key === "Escape") {
      select(-1);
    }
  });
  methodSelect.addEventListener("change", applyFilter);
  sessionSelect.addEventListener("change", applyFilter);
  window.addEventListener("resize", () => {
    layoutDirty = true;
    queueDraw();
  });

  // ---------------------------------------------------------------- live

  let liveNext = config.live ? config.live.next : 0;
  let liveGeneration = config.live ? config.live.generation : 0;

  function atBottom() {
    return scroller.scrollTop + scroller.clientHeight >= scroller.scrollHeight - ROW_H;
  }

  function appendRows(added) {
    if (!added.length) return;
    if (view && (filter.method || filter.session)) {
      for (const r of added) if (matches(M.rows[r])) view.push(r);
    }
    updateFilters();
    updateSummary();
    updateShown();
    sizeSpacer();
  }

  async function follow() {
    $("live").hidden = false;
    const state = $("live-state");
    for (;;) {
      try {
        const res = await fetch("records?from=" + liveNext + "&generation=" + liveGeneration, { cache: "no-store" });
        if (!res.ok) throw new Error("HTTP " + res.status);
        const body = await res.json();
        if (body.reset) {
          state.textContent = "the file was replaced: reloading";
          location.reload();
          return;
        }
        const follow = $("follow").checked && atBottom();
        const added = ingest(body.records);
        liveNext = body.next;
        appendRows(added);
        if (follow) scroller.scrollTop = scroller.scrollHeight;
        draw();
        publishReport();
        state.textContent = "● live";
        state.className = "on";
      } catch (err) {
        state.textContent = "○ disconnected, retrying";
        state.className = "off";
        await new Promise((resolve) => setTimeout(resolve, 2000));
      }
    }
  }

  // ---------------------------------------------------------------- self-checks

  // #bench: scroll frames timed, each frame's canvas raster forced.
  function runBench() {
    const frames = [];
    const maxScroll = scroller.scrollHeight - scroller.clientHeight;
    const frame = (top) => {
      scroller.scrollTop = top;
      const t = performance.now();
      draw();
      ctx.getImageData(0, 0, 1, 1);
      frames.push(performance.now() - t);
    };
    for (let i = 0; i < 300; i++) frame(i * 3 * ROW_H); // wheel-like steps from the top
    for (let i = 0; i < 100; i++) frame((maxScroll * i) / 99); // jumps over the whole trace
    const sorted = frames.slice().sort((a, b) => a - b);
    const pct = (p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
    bench = {
      frames: frames.length,
      meanMs: frames.reduce((a, b) => a + b, 0) / frames.length,
      p50Ms: pct(0.5),
      p95Ms: pct(0.95),
      maxMs: sorted[sorted.length - 1],
      rows: viewLength(),
      scrollHeight: scroller.scrollHeight,
    };
    scroller.scrollTop = 0;
    draw();
  }

  // #selftest: the page's own interactions, driven by synthetic events.
  function runSelftest() {
    const out = {};
    const rect = () => canvas.getBoundingClientRect();
    const clickRow = (r) => {
      const v = viewIndexOf(r);
      const y = v * ROW_H - topPx() + ROW_H / 2;
      const ends = arrowEnds(M.rows[r]);
      const x = (ends.x1 + ends.x2) / 2;
      canvas.dispatchEvent(new MouseEvent("click", { bubbles: true, clientX: rect().left + x, clientY: rect().top + y }));
    };
    // A request with an answer, the first from the editor's side when there is one.
    let r = M.rows.findIndex((row) => row.type === "m" && row.kind === "request" && row.pair >= 0 && row.dirIn && row.lane.idx === 0);
    if (r < 0) r = M.rows.findIndex((row) => row.type === "m" && row.kind === "request" && row.pair >= 0);
    if (r >= 0) {
      scrollToRow(r);
      draw();
      clickRow(r);
      const payload = $("payload");
      out.clicked = M.rows[r].i;
      out.selectedAfterClick = selected >= 0 ? M.rows[selected].i : null;
      out.payloadShown = !!payload && payload.textContent.includes(JSON.stringify(M.rows[r].method));
      out.pair = M.rows[M.rows[r].pair].i;
      clickRow(r); // again: to its response
      out.selectedAfterSecondClick = selected >= 0 ? M.rows[selected].i : null;
      draw();
      out.pairVisible = selected >= 0 && rowIsVisible(selected);
      const next = $("details").querySelector(".nav button");
      out.backButton = next ? next.textContent : null;
      if (next) next.click();
      out.selectedAfterButton = selected >= 0 ? M.rows[selected].i : null;
    }
    const tryFilter = (select, value, field) => {
      select.value = value;
      select.dispatchEvent(new Event("change"));
      const rows = viewLength();
      let all = true;
      for (let v = 0; v < rows; v++) if (M.rows[rowAt(v)][field] !== value) all = false;
      const expected = M.rows.filter((row) => row.type === "m" && row[field] === value).length;
      const drawnAll = lastDraw.drawn.every((d) => d.record !== undefined && M.rows.find((row) => row.i === d.record)[field] === value);
      select.value = "";
      select.dispatchEvent(new Event("change"));
      return { value, rows, expected, allMatch: all, drawnMatch: drawnAll, restored: viewLength() === M.rows.length };
    };
    const methods = [...M.methods.entries()].sort((a, b) => a[1] - b[1]);
    const prompt = methods.find(([m]) => m === "session/prompt") || methods[0];
    if (prompt) out.methodFilter = tryFilter(methodSelect, prompt[0], "method");
    const session = [...M.sessions.keys()][0];
    if (session) out.sessionFilter = tryFilter(sessionSelect, session, "session");
    selftest = out;
  }

  // ---------------------------------------------------------------- start

  const t0Index = performance.now();
  ingest(initial);
  timings.indexMs = performance.now() - t0Index;
  $("trace-name").textContent = document.title.replace(/ · acp-conductor trace$/, "");
  updateFilters();
  updateSummary();
  updateShown();
  layout();
  const t0Draw = performance.now();
  draw();
  timings.firstDrawMs = performance.now() - t0Draw;
  timings.loadMs = performance.now(); // since navigation started: reading the page included
  const hash = new URLSearchParams(location.hash.slice(1));
  if (hash.has("bench")) runBench();
  if (hash.has("selftest")) runSelftest();
  if (hash.has("select")) {
    const rec = Number(hash.get("select"));
    const r = M.rows.findIndex((row) => row.i === rec);
    if (r >= 0) {
      scrollToRow(r);
      select(r);
    }
  }
  publishReport();
  if (config.live) follow();
})();
