{% load static %}// Hook Bridge's service worker: the dashboard installs as an app, and a page opened with no connection shows
// the offline page instead of the browser's error. Nothing a person sees is cached: questions are live or not at all.
// It also shows the questions pushed to this browser (notify.push) and sends their Allow and Deny.
"use strict";

const CACHE = "hookbridge-shell-{{ version }}";
const OFFLINE = "{% url 'dashboard:offline' %}";
const ICON = "{% static 'icon-192.png' %}";
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

// A push is one question's notification, or its outcome under the same tag, which replaces it quietly.
self.addEventListener("push", (event) => {
  let shown;
  try {
    shown = event.data ? event.data.json() : {};
  } catch {
    shown = { body: event.data.text() };
  }
  const ended = Boolean(shown.ended);
  const options = {
    body: shown.body || "",
    icon: ICON,
    badge: ICON,
    actions: shown.actions || [],
    silent: ended,
    // An approval waits on a person: it stays until they act on it or it is decided elsewhere.
    requireInteraction: !ended && (shown.actions || []).length > 1,
    data: { url: shown.url || "/", token: shown.token || "", act: shown.act || "" },
  };
  if (shown.tag) Object.assign(options, { tag: shown.tag, renotify: !ended });
  event.waitUntil(self.registration.showNotification(shown.title || "Hook Bridge", options));
});

// Allow and Deny answer from the notification (the server checks its signed token and the person's role);
// Open, or a tap on the notification itself, opens the question.
self.addEventListener("notificationclick", (event) => {
  const notification = event.notification;
  const data = notification.data || {};
  notification.close();
  const deciding = (event.action === "allow" || event.action === "deny") && data.token && data.act;
  event.waitUntil(deciding ? decide(notification, event.action) : openPage(data.url));
});

async function decide(notification, action) {
  const data = notification.data;
  let said;
  try {
    const response = await fetch(data.act, {
      method: "POST", body: new URLSearchParams({ token: data.token, action }), credentials: "omit",
    });
    const answer = await response.json().catch(() => ({}));
    said = response.ok ? (action === "allow" ? "Allowed." : "Denied.") : answer.error || `Not sent: the server answered ${response.status}.`;
  } catch {
    said = "Not sent: the server is out of reach. Tap to open the question.";
  }
  await self.registration.showNotification(notification.title, {
    body: said, tag: notification.tag, icon: ICON, badge: ICON, silent: true, data: { url: data.url },
  });
}

async function openPage(url) {
  const target = new URL(url || "/", self.location.origin).href;
  const open = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  const same = open.find((client) => client.url === target);
  return same ? same.focus() : self.clients.openWindow(target);
}
