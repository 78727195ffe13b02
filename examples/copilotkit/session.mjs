// The application's own sign-in, as small as it can be and still be one: a
// fixed list of accounts, and a session cookie that names the user, signed
// with HMAC-SHA256 so that a browser cannot forge or alter it. server.mjs
// takes the user of every request from this cookie, never from a header the
// browser sent.
//
// Environment:
//   DEMO_USERS      the accounts, "name:password" pairs separated by commas
//                   (default "alice:wonderland,bob:builder")
//   SESSION_SECRET  the key the cookies are signed with; without it a random
//                   one is drawn at start, and every restart signs everyone
//                   out (set it to keep sessions across restarts and replicas)
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

const cookieName = "aapagui_session";
const maxAgeSeconds = 8 * 60 * 60;
const secret = process.env.SESSION_SECRET || randomBytes(32).toString("hex");

// A user name travels in a header to agui2aap and in the cookie: keep it to
// characters that need no escaping in either.
const validName = /^[A-Za-z0-9._-]{1,64}$/;

const accounts = new Map(
  (process.env.DEMO_USERS ?? "alice:wonderland,bob:builder")
    .split(",")
    .map((pair) => pair.trim())
    .filter(Boolean)
    .map((pair) => {
      const at = pair.indexOf(":");
      const name = at < 0 ? "" : pair.slice(0, at);
      if (!validName.test(name)) throw new Error(`DEMO_USERS: "${pair}" is not name:password`);
      return [name, digest(pair.slice(at + 1))];
    }),
);

function digest(text) {
  return createHash("sha256").update(text).digest();
}

function sign(payload) {
  return createHmac("sha256", secret).update(payload).digest("base64url");
}

// checkPassword reports whether password is user's. It compares digests in
// constant time, and does the same work for an unknown user.
export function checkPassword(user, password) {
  const want = accounts.get(user) ?? digest(randomBytes(16));
  const ok = timingSafeEqual(want, digest(String(password ?? "")));
  return ok && accounts.has(user);
}

// sessionCookie is the Set-Cookie value that signs user in: HttpOnly, so
// that no script of the page can read it, and SameSite=Lax, so that another
// site cannot make the browser send it with a POST (a run) of its own.
export function sessionCookie(user) {
  const expires = Math.floor(Date.now() / 1000) + maxAgeSeconds;
  const payload = `${Buffer.from(user).toString("base64url")}.${expires}`;
  return `${cookieName}=${payload}.${sign(payload)}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}`;
}

// signedOutCookie is the Set-Cookie value that ends the session.
export function signedOutCookie() {
  return `${cookieName}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0`;
}

// sessionUser is the user the request's Cookie header signs in, or null when
// it has no session cookie, or one that is forged, altered or expired.
export function sessionUser(cookieHeader) {
  for (const part of (cookieHeader ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (part.slice(0, eq).trim() !== cookieName) continue;
    const [name, expires, mac] = part.slice(eq + 1).trim().split(".");
    if (!name || !expires || !mac) return null;
    const want = Buffer.from(sign(`${name}.${expires}`));
    const got = Buffer.from(mac);
    if (got.length !== want.length || !timingSafeEqual(got, want)) return null;
    if (Number(expires) * 1000 < Date.now()) return null;
    const user = Buffer.from(name, "base64url").toString();
    return validName.test(user) ? user : null;
  }
  return null;
}
