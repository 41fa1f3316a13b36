// The console's shell: sign-in, who may enter, the navigation and the page of the address's #fragment.
import { all, get } from "./api.js";
import { current, onEnd, resume, signOut } from "./session.js";
import { el, errorBox, loading, replace } from "./ui.js";
import { renderSignIn } from "./page-signin.js";
import { renderOverview } from "./page-overview.js";
import { renderProject } from "./page-projects.js";
import { renderMembers } from "./page-members.js";
import { renderData } from "./page-data.js";
import { renderDevices } from "./page-devices.js";
import { renderFiles } from "./page-files.js";
import { renderActivity } from "./page-activity.js";
import { renderIntegrations } from "./page-integrations.js";

const pages = [
  ["schema", "Project", renderProject],
  ["members", "Members", renderMembers],
  ["data", "Data", renderData],
  ["devices", "Devices", renderDevices],
  ["files", "Files", renderFiles],
  ["activity", "Activity", renderActivity],
  ["integrations", "Integrations", renderIntegrations],
];

const main = document.getElementById("main");
const nav = document.getElementById("nav");
const who = document.getElementById("who");
const signOutButton = document.getElementById("signout");
/** What the page being shown asked to stop when another replaces it (polling, live streams). */
let stopPage = null;
/** The projects the signed-in user may administer. */
let projects = [];

/** The projects a user may see here: every project for an operator, else those they are `admin` of. */
async function loadProjects(user) {
  if (user.operator) return (await all("/v1/admin/projects")).map((project) => project.name);
  return user.projects.filter((membership) => membership.role === "admin").map((membership) => membership.name);
}

async function start() {
  get("/health").then((health) => (document.getElementById("server").textContent = `Cairn ${health.version}`)).catch(() => {});
  signOutButton.addEventListener("click", async () => {
    signOutButton.disabled = true;
    await signOut();
    signOutButton.disabled = false;
  });
  onEnd(() => {
    projects = [];
    show();
  });
  window.addEventListener("hashchange", show);
  resume();
  await show();
}

/** Shows the page the address names, or the sign-in form. */
async function show() {
  stopPage?.();
  stopPage = null;
  const session = current();
  if (!session) {
    nav.hidden = true;
    signOutButton.hidden = true;
    who.textContent = "";
    replace(main, renderSignIn(() => show()));
    return;
  }
  who.textContent = `${session.user.name}${session.user.operator ? " · operator" : ""}`;
  signOutButton.hidden = false;
  if (projects.length === 0) {
    replace(main, loading());
    try {
      projects = await loadProjects(session.user);
    } catch (error) {
      replace(main, errorBox(error));
      return;
    }
  }
  if (!session.user.operator && projects.length === 0) {
    nav.hidden = true;
    replace(main, el("section", { class: "refused", role: "alert" },
      el("h1", {}, "No access"),
      el("p", {}, `${session.user.name} is neither a server operator nor an admin of any project, so the console has nothing to show. `
        + "Ask an operator to make you a project admin."),
      el("button", { type: "button", onclick: () => signOut() }, "Sign out")));
    return;
  }
  const [, project, pageName] = decodeURIComponent(location.hash).match(/^#\/p\/([^/]+)\/(\w+)/) ?? [];
  renderNav(project, pageName);
  const page = pages.find(([name]) => name === pageName);
  const container = el("div", { class: "page" });
  replace(main, container);
  if (project && page && projects.includes(project)) {
    stopPage = page[2](container, project, session) ?? null;
  } else if (project) {
    replace(container, errorBox({ code: "not_found", message: `There is no project "${project}" you may administer.` }));
  } else {
    stopPage = renderOverview(container, projects, session) ?? null;
  }
  main.focus({ preventScroll: true });
}

function renderNav(project, pageName) {
  nav.hidden = false;
  const picker = el("select", { id: "project-picker", onchange: (event) => (location.hash = `#/p/${encodeURIComponent(event.target.value)}/${pageName ?? "schema"}`) },
    el("option", { value: "", disabled: true, selected: !project }, "Choose a project…"),
    projects.map((name) => el("option", { value: name, selected: name === project }, name)));
  replace(nav,
    el("a", { href: "#/", class: project ? "" : "active" }, "Server overview"),
    el("label", { for: "project-picker", class: "nav-label" }, "Project"),
    picker,
    project ? el("ul", {}, pages.map(([name, label]) =>
      el("li", {}, el("a", { href: `#/p/${encodeURIComponent(project)}/${name}`, class: name === pageName ? "active" : "", "aria-current": name === pageName ? "page" : null }, label)))) : null);
}

start();
