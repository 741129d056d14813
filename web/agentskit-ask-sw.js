// agentskit-ask-sw.js: the opt-in offline cache of the agentskit-web Ask widget.
//
// Registered by agentskit-ask.js only for <agentskit-ask offline="cache">, after the
// runtime has booted once (so the files below come from the HTTP cache, not the
// network). It keeps three caches:
//
//   agentskit-ask:runtime:<version>  the files listed below (the runtime folder's boot
//                                    files and the stylesheet), served cache-first: their
//                                    names carry a content hash, so they never change;
//   agentskit-ask:pages              the pages that asked for the offline cache, the
//                                    loader, the knowledge file and the page's own
//                                    stylesheets: served network-first, refreshed on every
//                                    successful response, used only when the network fails.
//
//   agentskit-ask:index              the static index files (index/ beside this worker:
//                                    a manifest and parts with content-hashed names),
//                                    kept as pages fetch them and served cache-first, so
//                                    a question whose parts were fetched once is answered
//                                    offline; a new build's manifest drops the files of
//                                    the builds before it;
//
// What the pages cache may keep is decided in one block below ("page caching rules"):
// only responses that may be cached (never no-store or private, never Vary: Cookie,
// Authorization or *), only the pages that embed the widget (or, when the site names an
// `offline-scope`, the pages under it), each for at most PAGE_MAX_AGE_MS. A kept page
// whose fresh copy no longer asks for the cache makes the worker clear its caches and
// unregister ("forgetting" block).
//
// A new build writes a new <version>; on activation every older runtime cache is
// deleted. Only same-origin GET requests are ever answered here; the Ask endpoint
// (POST) and everything else go to the network untouched.
//
// `agentskit-web assets` writes the PRECACHE line below.

const PRECACHE = /* agentskit:precache */ null;

const PREFIX = "agentskit-ask:";
const RUNTIME_PREFIX = `${PREFIX}runtime:`;
const RUNTIME_CACHE = `${RUNTIME_PREFIX}${PRECACHE.version}`;
const PAGES_CACHE = `${PREFIX}pages`;
const BASE = new URL(".", self.location.href);
const PRECACHED = new Set(PRECACHE.files.map((name) => new URL(name, BASE).href));
const INDEX_CACHE = `${PREFIX}index`;
const INDEX_FOLDER = new URL("index/", BASE).href;

self.addEventListener("install", (event) => {
  event.waitUntil(
    caches
      .open(RUNTIME_CACHE)
      .then((cache) => cache.addAll([...PRECACHED]))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((names) =>
        Promise.all(
          names
            .filter((name) => name.startsWith(RUNTIME_PREFIX) && name !== RUNTIME_CACHE)
            .map((name) => caches.delete(name)),
        ),
      )
      .then(() => self.clients.claim()),
  );
});

function sameOrigin(url) {
  return url.origin === self.location.origin;
}

// ---------------------------------------------------------------- page caching rules
// A shared browser must never show the next user what the last one saw: a response the
// server marks private (or varying by who asks) is never stored, an entry past its age is
// never served, and navigations are remembered only for the pages that asked.

const PAGE_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000;
const STORED_AT = "x-agentskit-stored-at";
const CONFIG_CACHE = `${PREFIX}config`;
const SCOPE_PAGES_KEY = new URL("agentskit-config/scope-pages", BASE).href;
const PERSONAL_VARY = new Set(["cookie", "authorization", "*"]);
const NOT_STORABLE = /(?:^|,)\s*(?:no-store|private)\s*(?:[=,]|$)/i;

// Whether a response may go into the pages cache. Set-Cookie is checked for completeness,
// but the Fetch standard hides it from workers: a page that sets a cookie must also say
// `private`, `no-store` or `Vary: Cookie` (docs/security.md).
function mayKeep(response) {
  if (!response.ok || response.type !== "basic") return false;
  if (NOT_STORABLE.test(response.headers.get("cache-control") || "")) return false;
  const vary = (response.headers.get("vary") || "").split(",").map((v) => v.trim().toLowerCase());
  if (vary.some((name) => PERSONAL_VARY.has(name))) return false;
  return !response.headers.has("set-cookie");
}

async function stamped(response) {
  const headers = new Headers(response.headers);
  headers.set(STORED_AT, String(Date.now()));
  const body = await response.blob();
  return new Response(body, { status: response.status, statusText: response.statusText, headers });
}

// Store a fresh response, or drop the entry when the page is now private; an error
// response (a 5xx, a 404) leaves the last good copy for the offline fallback.
async function remember(pages, key, response) {
  if (mayKeep(response)) await pages.put(key, await stamped(response.clone()));
  else if (response.ok) await pages.delete(key);
}

async function cachedPage(pages, request) {
  const cached = await pages.match(request);
  if (!cached) return undefined;
  const at = Number(cached.headers.get(STORED_AT));
  if (Number.isFinite(at) && at > 0 && Date.now() - at <= PAGE_MAX_AGE_MS) return cached;
  await pages.delete(request);
  return undefined;
}

async function scopePagesNamed() {
  const config = await caches.open(CONFIG_CACHE);
  return Boolean(await config.match(SCOPE_PAGES_KEY));
}

async function setScopePages(named) {
  const config = await caches.open(CONFIG_CACHE);
  if (named) await config.put(SCOPE_PAGES_KEY, new Response("1"));
  else await config.delete(SCOPE_PAGES_KEY);
}

async function networkFirst(request, navigation) {
  const pages = await caches.open(PAGES_CACHE);
  const cached = await cachedPage(pages, request);
  const anyPage = navigation && (await scopePagesNamed());
  if (!cached && !anyPage) return fetch(request);
  let response;
  try {
    response = await fetch(request);
  } catch (error) {
    if (cached) return cached;
    throw error;
  }
  if (navigation && cached && !(await stillAsked(response))) {
    await forgetEverything();
    return response;
  }
  await remember(pages, request, response);
  return response;
}
// ---------------------------------------------------------------- end of the page caching rules

// ---------------------------------------------------------------- forgetting
// A site that drops offline="cache" (or the widget) from a page must not leave a worker
// serving old copies: when a kept page's fresh HTML no longer carries the opt-in, the
// worker deletes every agentskit-ask cache and unregisters itself.

const OPT_IN = /\boffline\s*=\s*["']?cache\b/i;

async function stillAsked(response) {
  if (!response.ok || !(response.headers.get("content-type") || "").includes("text/html")) return true;
  return OPT_IN.test(await response.clone().text());
}

async function forgetEverything() {
  const names = await caches.keys();
  await Promise.all(names.filter((name) => name.startsWith(PREFIX)).map((name) => caches.delete(name)));
  await self.registration.unregister();
}
// ---------------------------------------------------------------- end of forgetting

async function cacheFirst(request) {
  const cached = await caches.match(request, { cacheName: RUNTIME_CACHE });
  return cached || fetch(request);
}

// ---------------------------------------------------------------- static index files
// Content-hashed, so a kept copy is right once its bytes are checked against its name: a
// manifest's name holds the hash of its bytes, a part's name its kind's hash tree root, to
// which the proof the part opens with must lead (as answering/static_index.py checks it).
// A file that fails (a host's SPA fallback answering 200 + HTML during a deploy) is never
// kept; a kept one that fails is dropped and fetched once more, past the HTTP cache, before
// the page sees anything. A response the page caching rules would not keep (private,
// no-store, personal Vary) is passed on and never kept.
function isIndexFile(url) {
  return url.href.startsWith(INDEX_FOLDER);
}

const keepable = mayKeep;
const HASH_CHARS = 16;
const PROOF_OPEN = '{"proof":"';
const PART_PLACE = /\/agentskit-static\.[a-z]+\.([0-9a-f]{16})-(\d+)\.json$/;
const HEX_DIGITS = /^(?:[0-9a-f]{16})*$/;

async function digest(bytes) {
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(hash, (byte) => byte.toString(16).padStart(2, "0")).join("").slice(0, HASH_CHARS);
}

const ascii = new TextEncoder();

// Whether an index file's bytes are the ones its name stands for.
async function holdsItsName(url, response) {
  const path = new URL(url).pathname;
  const bytes = new Uint8Array(await response.clone().arrayBuffer());
  const manifest = /\/agentskit-static\.([0-9a-f]{16})\.json$/.exec(path);
  if (manifest) return (await digest(bytes)) === manifest[1];
  const place = PART_PLACE.exec(path);
  if (!place) return false;
  const text = new TextDecoder("latin1").decode(bytes.subarray(0, 4096));
  const end = text.indexOf('",', PROOF_OPEN.length);
  if (!text.startsWith(PROOF_OPEN) || end < 0) return false;
  const proof = text.slice(PROOF_OPEN.length, end);
  if (!HEX_DIGITS.test(proof)) return false;
  const body = new Uint8Array(bytes.length - end - 1);
  body[0] = 0x7b; // the body's own opening brace, which the proof took the place of
  body.set(bytes.subarray(end + 2), 1);
  let node = await digest(body);
  let number = Number(place[2]);
  for (let at = 0; at < proof.length; at += HASH_CHARS) {
    const sibling = proof.slice(at, at + HASH_CHARS);
    node = await digest(ascii.encode(number & 1 ? sibling + node : node + sibling));
    number = Math.floor(number / 2);
  }
  return node === place[1];
}

// A fetched index file worth keeping: keepable and holding its name.
async function sound(url, response) {
  return keepable(response) && (await holdsItsName(url, response));
}

async function indexFile(event) {
  const { request } = event;
  const cache = await caches.open(INDEX_CACHE);
  const cached = await cache.match(request);
  if (cached) {
    if (await holdsItsName(request.url, cached)) return cached;
    await cache.delete(request);
  }
  let response = await fetch(request);
  let holds = await sound(request.url, response);
  if (!holds && keepable(response)) {
    response = await fetch(request, { cache: "reload" }); // once more, past the HTTP cache
    holds = await sound(request.url, response);
  }
  if (holds) {
    await cache.put(request, response.clone());
    if (MANIFEST_FILE.test(new URL(request.url).pathname)) {
      event.waitUntil(dropOtherBuilds(cache, request.url, response.clone()));
    }
  }
  return response;
}

// A manifest not yet kept is a new build's (its name is its hash). Its parts' names carry
// their kind's tree root, and every root it lists is in the manifest: the kept files of
// other builds (parts whose root it does not list, other manifests) are dropped, so a
// reader's cache holds one index and not one more per rebuild. A manifest that does not
// parse drops nothing (the page reports it; the kept files may still serve a reload).
const MANIFEST_FILE = /\/agentskit-static\.[0-9a-f]+\.json$/;
const PART_FILE = /\/agentskit-static\.[a-z]+\.([0-9a-f]+)-\d+\.json$/;

async function dropOtherBuilds(cache, manifestUrl, response) {
  let roots;
  try {
    roots = (await response.json()).roots;
  } catch {
    return;
  }
  if (!roots || typeof roots !== "object") return;
  const current = new Set(Object.values(roots).filter((root) => typeof root === "string"));
  if (current.size === 0) return;
  for (const kept of await cache.keys()) {
    if (kept.url === manifestUrl) continue;
    const path = new URL(kept.url).pathname;
    const part = PART_FILE.exec(path);
    if (part ? !current.has(part[1]) : MANIFEST_FILE.test(path)) await cache.delete(kept);
  }
}
// ---------------------------------------------------------------- end of static index files

self.addEventListener("fetch", (event) => {
  const { request } = event;
  if (request.method !== "GET") return;
  const url = new URL(request.url);
  if (!sameOrigin(url)) return;
  url.hash = "";
  if (PRECACHED.has(url.href)) {
    event.respondWith(cacheFirst(request));
    return;
  }
  if (isIndexFile(url)) {
    event.respondWith(indexFile(event));
    return;
  }
  event.respondWith(networkFirst(request, request.mode === "navigate"));
});

// The loader asks for the page's own files to be kept: {type: "agentskit:keep", urls}.
// The reply (on the message's port) says how many were stored, once the runtime cache
// is complete, so the page can tell its reader that it works offline now.
async function keep(urls, scopePages) {
  await setScopePages(scopePages);
  const pages = await caches.open(PAGES_CACHE);
  const refused = [];
  const wanted = [...new Set(urls)]
    .map((url) => new URL(url, self.location.href))
    .filter((url) => sameOrigin(url))
    .map((url) => ((url.hash = ""), url.href));
  const index = await caches.open(INDEX_CACHE);
  const stored = await Promise.allSettled(
    wanted.map(async (url) => {
      if (isIndexFile(new URL(url))) {
        // Already fetched by the page, so from the HTTP cache; kept only if keepable.
        const response = await fetch(url, { cache: "force-cache" });
        if (!(await sound(url, response))) throw new Error(`HTTP ${response.status}, not the named file`);
        await index.put(url, response);
        return;
      }
      const response = await fetch(url);
      if (!response.ok || response.type !== "basic") throw new Error(`HTTP ${response.status}`);
      if (!mayKeep(response)) {
        refused.push(url);
        await pages.delete(url);
        return;
      }
      await pages.put(url, await stamped(response));
    }),
  );
  const runtime = await caches.open(RUNTIME_CACHE);
  const missing = [];
  for (const url of PRECACHED) if (!(await runtime.match(url))) missing.push(url);
  return {
    version: PRECACHE.version,
    kept: stored.filter((result) => result.status === "fulfilled").length - refused.length,
    refused,
    failed: wanted.filter((_, index) => stored[index].status === "rejected"),
    missing,
  };
}

self.addEventListener("message", (event) => {
  const data = event.data;
  const port = event.ports[0];
  if (!data || data.type !== "agentskit:keep" || !Array.isArray(data.urls) || !port) return;
  event.waitUntil(
    keep(data.urls.filter((url) => typeof url === "string"), data.scopePages === true).then(
      (result) => port.postMessage(result),
      (error) => port.postMessage({ error: String(error && error.message ? error.message : error) }),
    ),
  );
});
