// The push for the console's live pages (issue 35): when the body names the push's origin (HARNESS_PUSH_URL), a
// server-sent-events stream of the user's projects' changes (harness/push/routes.py, /push/v1/desk/, the session
// cookie sent along: same site, maybe another port, so the stream answers CORS for the console's origin). Each
// change fires `harness-push` on the body, and every live part (hx-trigger "every Ns, harness-push from:body")
// asks its own poll at once: the page redraws through its usual request and permission checks, the stream says
// only "look again". Without the push (unset, refused, down) the parts keep polling at their interval.
(function () {
  "use strict";
  var origin = document.body && document.body.dataset.pushUrl;
  if (!origin || typeof EventSource === "undefined") return;
  var stream = new EventSource(origin + "/push/v1/desk/", { withCredentials: true });
  var pending = null;
  function nudge() {
    // Several changes in one moment (a bulk decision) make one redraw.
    if (pending) return;
    pending = setTimeout(function () {
      pending = null;
      document.body.dispatchEvent(new CustomEvent("harness-push"));
    }, 50);
  }
  stream.addEventListener("ready", function () { document.body.dataset.push = "open"; });
  stream.addEventListener("change", nudge);
  stream.addEventListener("resync", nudge);
  stream.onerror = function () {
    // EventSource reconnects by itself (retry: 2000); a 401 (signed out) closes it for good: polling goes on.
    document.body.dataset.push = stream.readyState === EventSource.CLOSED ? "closed" : "reconnecting";
  };
})();
