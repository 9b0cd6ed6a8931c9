{% load static %}// Hook Bridge's service worker: the dashboard installs as an app, and a page opened with no connection shows
// the offline page instead of the browser's error. Nothing a person sees is cached: questions are live or not at all.
"use strict";

const CACHE = "hookbridge-shell-{{ version }}";
const OFFLINE = "{% url 'dashboard:offline' %}";
const SHELL = [OFFLINE, "{% static 'hookbridge.css' %}", "{% static 'icon.svg' %}"];

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(SHELL)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches.keys()
      .then((names) => Promise.all(names.filter((name) => name !== CACHE).map((name) => caches.delete(name))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.mode === "navigate") {
    event.respondWith(fetch(request).catch(() => caches.match(OFFLINE)));
  } else if (SHELL.includes(new URL(request.url).pathname)) {
    // The offline page's own style and icon, when the network cannot give them.
    event.respondWith(fetch(request).catch(() => caches.match(request)));
  }
});
