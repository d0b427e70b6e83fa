// The trace viewer's diagram: view state, filters, layout and the canvas drawing of rows.
// Reads the model (model.js); knows nothing of the side panel (panel.js).

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
