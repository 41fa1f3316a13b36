// Calls to the server's documented routes with the session's token. A 401 refreshes once and retries; errors are
// thrown as the server's `{code, message, details}`.
import { current, refresh } from "./session.js";

/** `GET`/`PUT`/... `path` with an optional JSON `body`; resolves to the JSON answer (null for 204). */
export async function call(method, path, body, { raw = false, signal } = {}) {
  for (let attempt = 0; ; attempt++) {
    const session = current();
    const headers = {};
    if (session) headers.Authorization = `Bearer ${session.accessToken}`;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal });
    if (response.status === 401 && attempt === 0 && session?.refreshToken && (await refresh())) continue;
    if (!response.ok) {
      const answer = await response.json().catch(() => ({}));
      const error = answer.error ?? { code: String(response.status), message: response.statusText };
      error.status = response.status;
      throw error;
    }
    if (raw) return response;
    return response.status === 204 ? null : response.json();
  }
}

export const get = (path, options) => call("GET", path, undefined, options);
export const put = (path, body) => call("PUT", path, body);
export const post = (path, body) => call("POST", path, body);
export const del = (path) => call("DELETE", path);

/** A path segment, escaped. */
export const seg = encodeURIComponent;

/** A query string from an object, skipping empty values; arrays repeat the name. */
export function query(parameters) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(parameters)) {
    if (value === undefined || value === null || value === "") continue;
    for (const one of Array.isArray(value) ? value : [value]) search.append(name, String(one));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

/** Every item of an administration list (`{items, next}`), page after page, up to `max`. */
export async function all(path, max = 5000) {
  const items = [];
  let after = null;
  do {
    const page = await get(path + query({ after, limit: 1000 }));
    items.push(...page.items);
    after = page.next;
  } while (after && items.length < max);
  return items;
}
