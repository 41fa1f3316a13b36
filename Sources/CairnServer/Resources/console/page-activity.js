// Activity: the server's live figures from GET /metrics (requests, pushes and conflicts per minute, open live
// connections) as small charts, polled; and the project's notices as they arrive, read from its event stream with
// fetch (EventSource cannot send the Authorization header).
import { call, seg } from "./api.js";
import { el, errorBox, heading, replace } from "./ui.js";

const POLL_MS = 5000;
const POINTS = 36;

/** Sums of the samples of each metric family in Prometheus' text format. */
function parseMetrics(text) {
  const sums = {};
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const match = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/);
    if (!match) continue;
    const value = Number(match[3]);
    if (!Number.isFinite(value)) continue;
    sums[match[1]] = (sums[match[1]] ?? 0) + value;
  }
  return sums;
}

/** A small line chart on a canvas, with its label and latest value as text beside it. */
function chart(label, unit) {
  const canvas = el("canvas", { width: 360, height: 64, role: "img", "aria-label": `${label}, the last ${POINTS} readings` });
  const value = el("span", { class: "figure" }, "…");
  const values = [];
  const node = el("section", { class: "card chart" }, el("h3", {}, label), value, canvas);
  function draw() {
    const context = canvas.getContext("2d");
    const { width, height } = canvas;
    context.clearRect(0, 0, width, height);
    context.strokeStyle = "#d6dae0";
    context.beginPath();
    context.moveTo(0, height - 0.5);
    context.lineTo(width, height - 0.5);
    context.stroke();
    // One bar per reading, newest on the right; the tallest reaches the top.
    const top = Math.max(1, ...values);
    const slot = width / POINTS;
    context.fillStyle = "#2f6fdb";
    values.forEach((v, i) => {
      const barHeight = Math.max(v > 0 ? 2 : 0, (v / top) * (height - 6));
      context.fillRect(width - (values.length - i) * slot + 1, height - 1 - barHeight, slot - 2, barHeight);
    });
  }
  return {
    node,
    push(v) {
      values.push(v);
      if (values.length > POINTS) values.shift();
      value.textContent = `${Math.round(v * 10) / 10} ${unit}`;
      draw();
    },
  };
}

export function renderActivity(container, project) {
  const charts = {
    requests: chart("Requests", "per minute"),
    pushes: chart("Pushed operations", "per minute"),
    conflicts: chart("Conflicts", "per minute"),
    live: chart("Open live connections", "now"),
  };
  const metricsStatus = el("div", { "aria-live": "polite" });
  const notices = el("ol", { id: "notices", class: "notices" });
  const streamStatus = el("p", { class: "muted", id: "stream-status", role: "status" }, "Connecting to the project's notices…");
  const controller = new AbortController();
  let previous = null;
  let timer = null;

  async function poll() {
    try {
      const response = await fetch("/metrics", { signal: controller.signal });
      if (!response.ok) throw { code: String(response.status), message: "GET /metrics failed" };
      const sums = parseMetrics(await response.text());
      const now = Date.now();
      if (previous) {
        const minutes = (now - previous.at) / 60000;
        const rate = (name) => Math.max(0, ((sums[name] ?? 0) - (previous.sums[name] ?? 0)) / minutes);
        charts.requests.push(rate("cairn_http_requests_total"));
        charts.pushes.push(rate("cairn_pushed_operations_total"));
        charts.conflicts.push(rate("cairn_conflicts_total"));
      }
      charts.live.push(sums.cairn_sse_connections ?? 0);
      previous = { at: now, sums, first: !previous };
      replace(metricsStatus);
    } catch (error) {
      if (error.name !== "AbortError") replace(metricsStatus, errorBox(error));
    }
    // The second reading comes after a second, so the rates show at once; then every POLL_MS.
    if (!controller.signal.aborted) timer = setTimeout(poll, previous?.first ? 1000 : POLL_MS);
  }

  async function listen() {
    try {
      const response = await call("GET", `/v1/projects/${seg(project)}/events`, undefined, { raw: true, signal: controller.signal });
      streamStatus.textContent = "Listening: every change written to this project appears here.";
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = event.split("\n").filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trim()).join("\n");
          if (data) show(JSON.parse(data));
        }
      }
      streamStatus.textContent = "The server closed the stream; reconnecting…";
      setTimeout(listen, 1000);
    } catch (error) {
      if (error.name === "AbortError" || controller.signal.aborted) return;
      replace(streamStatus, errorBox(error));
      setTimeout(listen, 5000);
    }
  }

  function show(notice) {
    notices.prepend(el("li", {}, el("time", {}, new Date().toLocaleTimeString()), " ", el("code", {}, notice.collection), ` changed, now at version ${notice.version}`));
    while (notices.children.length > 100) notices.lastChild.remove();
  }

  replace(container, heading(`Activity of ${project}`),
    el("p", { class: "muted" }, `Server-wide figures from GET /metrics, every ${POLL_MS / 1000} seconds.`),
    metricsStatus,
    el("div", { class: "cards charts" }, Object.values(charts).map((c) => c.node)),
    el("h2", {}, "Live changes"), streamStatus, notices);
  poll();
  listen();
  return () => {
    controller.abort();
    clearTimeout(timer);
  };
}
