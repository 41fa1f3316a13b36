// A project's devices (registered clients): app, last sync, how far behind the feed; the stuck ones by `?behind=`.
import { del, get, post, query, seg } from "./api.js";
import { badge, el, errorBox, field, heading, loading, perform, replace, table, when } from "./ui.js";

export function renderDevices(container, project) {
  const base = `/v1/projects/${seg(project)}`;
  const behindInput = el("input", { id: "behind", type: "number", min: 0, value: "", placeholder: "any" });
  const status = el("div", { id: "devices-status", "aria-live": "polite" });
  const list = el("div", { id: "devices" });
  let after = null;
  let items = [];

  const act = (what, action) => perform(status, what, action, () => load());

  async function load(more = false) {
    if (!more) {
      after = null;
      items = [];
      replace(list, loading("Loading devices…"));
    }
    try {
      const page = await get(`${base}/clients${query({ behind: behindInput.value, after, limit: 100 })}`);
      items = [...items, ...page.items];
      after = page.next;
      show();
    } catch (error) {
      replace(list, errorBox(error));
    }
  }

  function show() {
    replace(list,
      el("p", { class: "muted", role: "status" }, `${items.length} device${items.length === 1 ? "" : "s"}${behindInput.value ? ` at least ${behindInput.value} versions behind` : ""}`),
      table([
        ["Client", (c) => el("code", { title: c.clientId, class: "nowrap" }, c.clientId.length > 14 ? `${c.clientId.slice(0, 12)}…` : c.clientId)],
        ["User", (c) => c.user],
        ["Device", (c) => c.device ?? "—"],
        ["App", (c) => c.app ?? "—"],
        ["Registered", (c) => when(c.registeredAt)],
        ["Last sync", (c) => when(c.lastSeenAt)],
        ["Behind", (c) => (c.behind > 0 ? badge(String(c.behind), c.behind >= 100 ? "bad" : "warn") : badge("up to date", "ok"))],
        ["Actions", (c) => el("div", { class: "row-actions" },
          el("button", { type: "button", class: "warn", "data-user": c.user, onclick: () => confirm(`Revoke every sign-in of ${c.user}? All their devices must sign in again.`)
            && act(`Revoking ${c.user}'s sign-ins`, () => post(`${base}/members/${seg(c.user)}/revoke-sign-ins`)) }, "Revoke user's sign-ins"),
          el("button", { type: "button", class: "danger", onclick: () => confirm(`Remove device ${c.clientId}? It stops holding tombstones back.`)
            && act(`Removing ${c.clientId}`, () => del(`${base}/clients/${seg(c.clientId)}`)) }, "Remove device"))],
      ], items, { empty: "No devices registered (or none that far behind)." }),
      after ? el("button", { type: "button", onclick: () => load(true) }, "More devices") : null);
  }

  const form = el("form", { id: "devices-form", class: "inline", onsubmit: (event) => { event.preventDefault(); load(); } },
    field("Only devices at least this many versions behind", behindInput), el("button", { type: "submit" }, "Show devices"),
    el("button", { type: "button", onclick: () => { behindInput.value = "1"; load(); } }, "Only stuck ones"));
  replace(container, heading(`Devices of ${project}`), form, status, list);
  load();
}
