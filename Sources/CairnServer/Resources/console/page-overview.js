// The server overview: its release, the projects the user may administer and, for operators, the last backup.
import { all, get } from "./api.js";
import { el, heading, into, replace, table, when } from "./ui.js";

/** The line about backups: the newest one's date, or "no backup yet" (also while the server has no backups route). */
async function backupLine() {
  try {
    const answer = await get("/v1/admin/backups");
    const newest = answer.backups?.[0];
    return newest ? `last backup: ${when(newest.createdAt)}` : "no backup yet";
  } catch (error) {
    if (error.status === 404) return "no backup yet";
    throw error;
  }
}

export function renderOverview(container, projects, session) {
  const facts = el("dl", { class: "facts" });
  const list = el("div");
  replace(container, heading("Server overview"), facts, el("h2", {}, "Projects"), list);

  get("/health").then(async (health) => {
    const rows = [["Release", health.version], ["Protocol", health.protocol], ["Signed in as", session.user.name],
      ["Role", session.user.operator ? "server operator" : "project admin"]];
    if (session.user.operator) rows.push(["Backups", await backupLine().catch((error) => `unknown (${error.message})`)]);
    replace(facts, rows.map(([term, value]) => [el("dt", {}, term), el("dd", { id: term === "Backups" ? "backups" : null }, value)]));
  }).catch((error) => replace(facts, el("dd", {}, error.message)));

  const open = (row) => (location.hash = `#/p/${encodeURIComponent(row.name)}/schema`);
  if (session.user.operator) {
    into(list, () => all("/v1/admin/projects"), (items) => table([
      ["Project", (row) => el("a", { href: `#/p/${encodeURIComponent(row.name)}/schema` }, row.name)],
      ["Members", (row) => row.members],
      ["Head version", (row) => row.headVersion],
      ["Created", (row) => when(row.createdAt)],
    ], items, { onRow: open, empty: "No projects yet: create one with cairn admin create-project." }));
  } else {
    replace(list, table([["Project", (row) => el("a", { href: `#/p/${encodeURIComponent(row.name)}/schema` }, row.name)], ["Your role", () => "admin"]],
      projects.map((name) => ({ name })), { onRow: open }));
  }
}
