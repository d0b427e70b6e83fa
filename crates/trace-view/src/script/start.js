// The trace viewer's start: the render report, keyboard and mouse, following a live trace,
// the bench and self-test hooks, and the first draw. Runs last, once everything is defined.

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
