// The reviewer's desk: keyboard review of the inbox and the approval page, select-all and the argument preview
// of the inbox's bulk form, and keeping what the reviewer selected when the inbox redraws itself (its table polls
// the server: runs_app/views/live.py). Vanilla JS, no build step; every decision is still the page's own CSRF
// form, submitted to the same view as a click would.
(function () {
  "use strict";

  function typing(target) {
    // No shortcut fires while the reviewer writes in a field (a reason, edited arguments, a filter).
    if (!target || !target.tagName) return false;
    var tag = target.tagName.toLowerCase();
    return tag === "input" || tag === "textarea" || tag === "select" || target.isContentEditable;
  }

  // --- the inbox: a current row, moved with j/k or the arrows, opened with Enter or o -------------------------

  var current = null; // the approval id of the current row; it survives the table's redraws

  function rows() {
    return Array.prototype.slice.call(document.querySelectorAll("#inbox-table tr.approval-row"));
  }

  function mark(row) {
    rows().forEach(function (r) {
      r.classList.remove("current");
      r.removeAttribute("aria-current");
    });
    if (!row) return;
    row.classList.add("current");
    row.setAttribute("aria-current", "true");
    current = row.getAttribute("data-approval");
    var link = row.querySelector("a.review");
    if (link) link.focus(); // Enter on the focused link opens it, as the browser does
    row.scrollIntoView({block: "nearest"});
  }

  function move(step) {
    var all = rows();
    if (!all.length) return;
    var at = all.findIndex(function (r) { return r.getAttribute("data-approval") === current; });
    var next = at < 0 ? (step > 0 ? 0 : all.length - 1) : Math.min(Math.max(at + step, 0), all.length - 1);
    mark(all[next]);
  }

  function currentRow() {
    return rows().find(function (r) { return r.getAttribute("data-approval") === current; }) || null;
  }

  // --- the bulk form: select all / none, and each selected approval's arguments -------------------------------

  function boxes() {
    return Array.prototype.slice.call(document.querySelectorAll("#bulk-form input[name=item]"));
  }

  function showPreview() {
    var selected = {};
    boxes().forEach(function (box) {
      if (box.checked) selected[box.value.split(":")[0]] = true;
    });
    var items = document.querySelectorAll("#bulk-preview .bulk-preview-item");
    var shown = 0;
    Array.prototype.forEach.call(items, function (item) {
      var on = !!selected[item.getAttribute("data-preview")];
      item.hidden = !on;
      if (on) shown += 1;
    });
    var empty = document.getElementById("bulk-preview-empty");
    if (empty) empty.hidden = shown > 0;
    var count = document.getElementById("bulk-selected");
    if (count) count.textContent = shown + " selected";
  }

  function setAll(on) {
    boxes().forEach(function (box) { box.checked = on; });
    showPreview();
  }

  function setUpInbox() {
    // Without this script every row's arguments stay listed and the buttons stay hidden.
    ["bulk-all", "bulk-none"].forEach(function (id) {
      var button = document.getElementById(id);
      if (button) button.hidden = false;
    });
    showPreview();
    if (current) {
      var row = currentRow();
      if (row) {
        row.classList.add("current");
        row.setAttribute("aria-current", "true");
      }
    }
  }

  // The table redraws itself when something changed: keep the boxes the reviewer ticked, for rows that are
  // still there unchanged (a box's value carries the version and fingerprint, so a changed row is not kept).
  var ticked = null;
  var hadFocus = false;
  var reasonText = null;

  // A poll never redraws under the reviewer's hands: not while a field of the redrawn part has the focus (the
  // bulk reason, a filter), nor a run's page while an action's preview is open there; the next tick asks again.
  document.addEventListener("htmx:beforeRequest", function (event) {
    var elt = event.detail.elt;
    if (!elt || (elt.id !== "inbox-table" && elt.id !== "run-live")) return;
    var part = elt.id === "run-live" ? document.getElementById("run-page") : elt;
    var slot = document.getElementById("action-panel-slot");
    if ((part && part.contains(document.activeElement) && typing(document.activeElement)) ||
        (elt.id === "run-live" && slot && slot.children.length)) {
      event.preventDefault();
    }
  });

  document.addEventListener("htmx:beforeSwap", function (event) {
    if (!event.detail.target || event.detail.target.id !== "inbox-table") return;
    var reason = document.getElementById("bulk_reason");
    reasonText = reason ? reason.value : null;
    ticked = boxes().filter(function (box) { return box.checked; }).map(function (box) { return box.value; });
    var table = document.getElementById("inbox-table");
    hadFocus = !!(table && table.contains(document.activeElement) && document.activeElement.classList.contains("review"));
  });
  document.addEventListener("htmx:afterSettle", function (event) {
    var redrawn = event.detail.target && event.detail.target.id;
    if (redrawn === "inbox-table" || redrawn === "overview-counts" || redrawn === "run-page") {
      // Something changed: the navigation's badge asks again now rather than at its next tick (base.html).
      document.body.dispatchEvent(new CustomEvent("desk-changed"));
    }
    if (!document.getElementById("inbox-table")) return;
    if (ticked) {
      boxes().forEach(function (box) { if (ticked.indexOf(box.value) >= 0) box.checked = true; });
      ticked = null;
    }
    var reason = document.getElementById("bulk_reason");
    if (reason && reasonText && !reason.value) reason.value = reasonText;
    reasonText = null;
    setUpInbox();
    if (hadFocus && currentRow()) mark(currentRow());
    hadFocus = false;
  });

  document.addEventListener("click", function (event) {
    var id = event.target && event.target.id;
    if (id === "bulk-all") setAll(true);
    if (id === "bulk-none") setAll(false);
  });
  document.addEventListener("change", function (event) {
    if (event.target && event.target.name === "item") showPreview();
  });

  // --- the keys ------------------------------------------------------------------------------------------------

  function toggleHelp() {
    var help = document.getElementById("shortcuts");
    if (help) help.open = !help.open;
  }

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented) return;
    var reject = document.getElementById("reject");
    // In the rejection's reason, Ctrl+Enter sends it (the same form, the same POST).
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && event.target.id === "reject_reason" && reject) {
      event.preventDefault();
      reject.click();
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
    var key = event.key;
    if (key === "?") { event.preventDefault(); toggleHelp(); return; }
    if (document.getElementById("inbox-table")) {
      if (key === "j" || key === "ArrowDown") { event.preventDefault(); move(1); return; }
      if (key === "k" || key === "ArrowUp") { event.preventDefault(); move(-1); return; }
      var row = currentRow();
      if (row && (key === "o" || (key === "Enter" && event.target === document.body))) {
        var link = row.querySelector("a.review");
        if (link) { event.preventDefault(); window.location.assign(link.href); }
        return;
      }
      if (row && key === "x") {
        var box = row.querySelector("input[name=item]");
        if (box) { event.preventDefault(); box.checked = !box.checked; showPreview(); }
      }
      return;
    }
    var approve = document.getElementById("approve");
    if (key === "a" && approve) {
      // A confirmation without the mouse: the focus moves to the button and Enter presses it.
      event.preventDefault();
      approve.focus();
      approve.scrollIntoView({block: "center"});
      return;
    }
    var reason = document.getElementById("reject_reason");
    if (key === "r" && reason) { event.preventDefault(); reason.focus(); return; }
    var back = document.querySelector("a.back-to-inbox");
    if (key === "u" && back) { event.preventDefault(); window.location.assign(back.href); }
  });

  document.addEventListener("DOMContentLoaded", function () {
    if (document.getElementById("inbox-table")) setUpInbox();
  });
})();
