// agentskit-ask-sw.js: the opt-in offline cache of the agentskit-web Ask widget.
//
// Registered by agentskit-ask.js only for <agentskit-ask offline="cache">, after the
// runtime has booted once (so the files below come from the HTTP cache, not the
// network). It keeps two caches:
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
//                                    offline;
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

async function networkFirst(request, remember) {
  const pages = await caches.open(PAGES_CACHE);
  const cached = await pages.match(request);
  if (!remember && !cached) return fetch(request);
  try {
    const response = await fetch(request);
    if (response.ok && response.type === "basic") await pages.put(request, response.clone());
    return response;
  } catch (error) {
    if (cached) return cached;
    throw error;
  }
}

async function cacheFirst(request) {
  const cached = await caches.match(request, { cacheName: RUNTIME_CACHE });
  return cached || fetch(request);
}

// ---------------------------------------------------------------- static index files
// Content-hashed, so a kept copy is always right; a response a server marks private or
// no-store is passed on and never kept.
function isIndexFile(url) {
  return url.href.startsWith(INDEX_FOLDER);
}

function keepable(response) {
  const control = (response.headers.get("cache-control") || "").toLowerCase();
  return response.ok && response.type === "basic" && !/\b(private|no-store)\b/.test(control);
}

async function indexFile(request) {
  const cache = await caches.open(INDEX_CACHE);
  const cached = await cache.match(request);
  if (cached) return cached;
  const response = await fetch(request);
  if (keepable(response)) await cache.put(request, response.clone());
  return response;
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
    event.respondWith(indexFile(request));
    return;
  }
  event.respondWith(networkFirst(request, request.mode === "navigate"));
});

// The loader asks for the page's own files to be kept: {type: "agentskit:keep", urls}.
// The reply (on the message's port) says how many were stored, once the runtime cache
// is complete, so the page can tell its reader that it works offline now.
async function keep(urls) {
  const pages = await caches.open(PAGES_CACHE);
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
        if (!keepable(response)) throw new Error(`HTTP ${response.status}`);
        await index.put(url, response);
        return;
      }
      const response = await fetch(url);
      if (!response.ok || response.type !== "basic") throw new Error(`HTTP ${response.status}`);
      await pages.put(url, response);
    }),
  );
  const runtime = await caches.open(RUNTIME_CACHE);
  const missing = [];
  for (const url of PRECACHED) if (!(await runtime.match(url))) missing.push(url);
  return {
    version: PRECACHE.version,
    kept: stored.filter((result) => result.status === "fulfilled").length,
    failed: wanted.filter((_, index) => stored[index].status === "rejected"),
    missing,
  };
}

self.addEventListener("message", (event) => {
  const data = event.data;
  const port = event.ports[0];
  if (!data || data.type !== "agentskit:keep" || !Array.isArray(data.urls) || !port) return;
  event.waitUntil(
    keep(data.urls.filter((url) => typeof url === "string")).then(
      (result) => port.postMessage(result),
      (error) => port.postMessage({ error: String(error && error.message ? error.message : error) }),
    ),
  );
});
