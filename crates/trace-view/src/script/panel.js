// The trace viewer's side panel: the selected message, its path and pair, the link summary.
// Reads the model and the diagram's view state; draws nothing on the canvas itself.

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
