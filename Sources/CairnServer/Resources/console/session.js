// The signed-in session: tokens in this tab's sessionStorage (never in a URL or a cookie, so another site cannot make
// the browser send them), refreshed before they expire, revoked at sign-out.

const KEY = "cairn.console.session";
let refreshTimer = null;
const listeners = new Set();

/** The session, or null: `{accessToken, refreshToken?, expiresAt?, user: {name, projects, operator}}`. */
export function current() {
  try {
    return JSON.parse(sessionStorage.getItem(KEY));
  } catch {
    return null;
  }
}

/** Calls `listener` when the session ends (signed out, or a refresh failed). */
export function onEnd(listener) {
  listeners.add(listener);
}

function store(session) {
  sessionStorage.setItem(KEY, JSON.stringify(session));
  schedule(session);
}

function end() {
  sessionStorage.removeItem(KEY);
  clearTimeout(refreshTimer);
  for (const listener of listeners) listener();
}

function fromTokens(answer) {
  return {
    accessToken: answer.accessToken,
    refreshToken: answer.refreshToken,
    expiresAt: Date.now() + answer.expiresIn * 1000,
    user: answer.user,
  };
}

async function post(path, body, token) {
  const headers = { "Content-Type": "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  const response = await fetch(path, { method: "POST", headers, body: body ? JSON.stringify(body) : undefined });
  if (!response.ok) {
    const answer = await response.json().catch(() => ({}));
    throw answer.error ?? { code: String(response.status), message: response.statusText };
  }
  return response.status === 204 ? null : response.json();
}

/** Signs in with a Cairn username and password. */
export async function signIn(username, password) {
  const session = fromTokens(await post("/v1/auth/login", { username, password }));
  store(session);
  return session;
}

/** Signs in with an identity provider's token (a JWT): kept as the access token until its `exp`. */
export async function signInWithToken(token) {
  const response = await fetch("/v1/auth/me", { headers: { Authorization: `Bearer ${token}` } });
  const answer = await response.json().catch(() => ({}));
  if (!response.ok) throw answer.error ?? { code: String(response.status), message: response.statusText };
  let expiresAt = null;
  try {
    const payload = JSON.parse(atob(token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/")));
    if (payload.exp) expiresAt = payload.exp * 1000;
  } catch { /* the server checked it; an unreadable exp only means no timer */ }
  const session = { accessToken: token, expiresAt, user: answer };
  store(session);
  return session;
}

/** Exchanges the refresh token for a new pair; ends the session when that fails. Returns whether it worked. */
export async function refresh() {
  const session = current();
  if (!session?.refreshToken) {
    end();
    return false;
  }
  try {
    store(fromTokens(await post("/v1/auth/refresh", { refreshToken: session.refreshToken })));
    return true;
  } catch {
    end();
    return false;
  }
}

/** Signs out: the server revokes the sign-in, the tab forgets it. */
export async function signOut() {
  const session = current();
  if (session) await post("/v1/auth/logout", null, session.accessToken).catch(() => {});
  end();
}

/** Refreshes a minute before expiry (or at four fifths of a short lifetime); an IdP token ends at its `exp`. */
function schedule(session) {
  clearTimeout(refreshTimer);
  if (!session?.expiresAt) return;
  const left = session.expiresAt - Date.now();
  const lead = Math.min(60_000, left / 5);
  refreshTimer = setTimeout(() => (session.refreshToken ? refresh() : end()), Math.max(0, left - lead));
}

/** Restarts the refresh timer of a session kept from before a reload. */
export function resume() {
  const session = current();
  if (session) schedule(session);
  return session;
}
