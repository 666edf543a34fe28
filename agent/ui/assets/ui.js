// nomadq web UI: the user's token, live updates and actions.
// The token lives in session storage and goes to the API in the
// X-Nomad-Token header; a session cookie scoped to /ui lets the server
// render pages with it. It never goes into a URL.
(function () {
  "use strict";
  var KEY = "nomadq.token", COOKIE = "nomadq_ui_token";
  var body = document.body;
  var offset = Number(body.dataset.now || Date.now()) - Date.now();

  function token() { return sessionStorage.getItem(KEY) || ""; }
  function setCookie(t) {
    var secure = location.protocol === "https:" ? "; Secure" : "";
    if (t) document.cookie = COOKIE + "=" + encodeURIComponent(t) + "; path=/ui; SameSite=Strict" + secure;
    else document.cookie = COOKIE + "=; path=/ui; SameSite=Strict; Max-Age=0";
  }
  function setToken(t) {
    if (t) sessionStorage.setItem(KEY, t); else sessionStorage.removeItem(KEY);
    setCookie(t);
  }
  setCookie(token());

  function api(method, path, payload) {
    var opts = { method: method, headers: {} };
    if (token()) opts.headers["X-Nomad-Token"] = token();
    if (payload !== undefined) { opts.body = JSON.stringify(payload); opts.headers["Content-Type"] = "application/json"; }
    return fetch(path, opts).then(function (r) {
      if (!r.ok) return r.text().then(function (t) { throw new Error(r.status + ": " + t); });
      return r;
    });
  }
  function flash(msg) { document.getElementById("flash").textContent = msg; }

  // refresh redraws the page's content from the server, without a reload.
  // On a live page only the live part is redrawn, so a form being filled
  // in beside it keeps its input.
  function refresh() {
    var u = new URL(location.href);
    u.searchParams.set("fragment", "1");
    var headers = {};
    if (token()) headers["X-Nomad-Token"] = token();
    return fetch(u, { headers: headers }).then(function (r) { return r.text(); }).then(function (html) {
      var live = document.querySelector("[data-live]");
      var doc = new DOMParser().parseFromString("<div>" + html + "</div>", "text/html");
      var fresh = doc.querySelector("[data-live]");
      if (live && fresh) live.innerHTML = fresh.innerHTML;
      else document.getElementById("content").innerHTML = html;
      tick();
    });
  }

  // A one-time token from `nomad ui -authenticate` is exchanged for the
  // real one and taken out of the address bar.
  var params = new URLSearchParams(location.search);
  if (params.get("ott")) {
    var ott = params.get("ott");
    params.delete("ott");
    history.replaceState(null, "", location.pathname + (params.toString() ? "?" + params : ""));
    api("POST", "/v1/acl/token/onetime/exchange", { OneTimeSecretID: ott })
      .then(function (r) { return r.json(); })
      .then(function (j) { setToken(j.Token.SecretID); location.reload(); })
      .catch(function (e) { flash("One-time token refused: " + e.message); });
  }

  // Countdowns run on the server's clock: the page carries the server's
  // now, and each deadline is the alloc's CreateTime + max_run_duration.
  function fmt(ms) {
    if (ms <= 0) return "0s";
    var s = Math.floor(ms / 1000), h = Math.floor(s / 3600), m = Math.floor(s % 3600 / 60);
    s = s % 60;
    return (h ? h + "h" : "") + (h || m ? m + "m" : "") + s + "s";
  }
  function tick() {
    var now = Date.now() + offset;
    document.querySelectorAll(".countdown[data-deadline]").forEach(function (el) {
      el.textContent = fmt(Number(el.dataset.deadline) - now);
    });
  }
  tick();
  setInterval(tick, 1000);

  // Live pages follow the API with blocking queries, at most one a second.
  function follow(path) {
    var index = 0;
    function loop() {
      var started = Date.now();
      api("GET", path + (path.indexOf("?") < 0 ? "?" : "&") + "index=" + index + "&wait=60s")
        .then(function (r) {
          var next = Number(r.headers.get("X-Nomad-Index") || 0);
          var changed = index !== 0 && next !== index;
          index = next;
          return changed ? refresh() : null;
        })
        .catch(function () { started = Date.now() + 4000; })
        .then(function () { setTimeout(loop, Math.max(0, 1000 - (Date.now() - started))); });
    }
    loop();
  }
  var live = document.querySelector("[data-live]");
  if (live) follow(live.dataset.live);

  function done(msg) { return function () { flash(msg); return refresh(); }; }
  function failed(e) { flash(e.message); }
  document.addEventListener("click", function (ev) {
    var b = ev.target.closest("button[data-action]");
    if (!b) return;
    var d = b.dataset, ns = "?namespace=" + encodeURIComponent(d.ns || "default");
    if (d.action === "stop-job") {
      if (!confirm("Stop job " + d.job + "?")) return;
      api("DELETE", "/v1/job/" + encodeURIComponent(d.job) + ns).then(done("Job " + d.job + " stopped")).catch(failed);
    } else if (d.action === "stop-alloc") {
      api("POST", "/v1/allocation/" + encodeURIComponent(d.alloc) + "/stop").then(done("Allocation stopped")).catch(failed);
    } else if (d.action === "queue") {
      api("PUT", "/v1/queue/job/" + encodeURIComponent(d.job) + "/" + d.op + ns).then(done(d.op + ": " + d.job)).catch(failed);
    } else if (d.action === "drain") {
      var spec = d.enable === "true" ? { DrainSpec: { Deadline: 3600e9 } } : { DrainSpec: null, MarkEligible: true };
      api("PUT", "/v1/node/" + encodeURIComponent(d.node) + "/drain", spec).then(done("Drain updated")).catch(failed);
    }
  });

  // The queue settings are written whole, as the API takes them, over
  // the configuration just read (cas), so a concurrent change is refused
  // rather than overwritten.
  document.addEventListener("submit", function (ev) {
    if (ev.target.id !== "queue-config") return;
    ev.preventDefault();
    var f = ev.target.elements;
    api("GET", "/v1/operator/scheduler/configuration").then(function (r) { return r.json(); }).then(function (j) {
      var cfg = j.SchedulerConfig, bq = cfg.BatchQueue || {};
      bq.Enabled = f.enabled.checked;
      bq.Order = f.order.value;
      bq.ConcurrentPlacements = Number(f.concurrent.value);
      bq.WorkloadTimeout = f.timeout.value.trim();
      bq.Backfill = f.backfill.checked;
      cfg.BatchQueue = bq;
      return api("PUT", "/v1/operator/scheduler/configuration?cas=" + cfg.ModifyIndex, cfg);
    }).then(function (r) { return r.json(); }).then(function (j) {
      if (j.Updated === false) throw new Error("the configuration changed meanwhile: reload and try again");
      flash("Queue settings applied.");
      return refresh();
    }).catch(failed);
  });

  // Logs stream from the client through the agent, plain text.
  var logAbort = null;
  document.addEventListener("click", function (ev) {
    var b = ev.target.closest("button[data-log]");
    if (!b) return;
    var box = b.closest(".logs"), pre = box.querySelector("pre.log");
    var followOn = box.querySelector(".follow").checked;
    if (logAbort) logAbort.abort();
    logAbort = new AbortController();
    pre.textContent = "";
    var q = "?plain=true&origin=start&offset=0&task=" + encodeURIComponent(box.dataset.task) + "&type=" + b.dataset.log + "&follow=" + followOn;
    var headers = {};
    if (token()) headers["X-Nomad-Token"] = token();
    fetch("/v1/client/fs/logs/" + encodeURIComponent(box.dataset.alloc) + q, { headers: headers, signal: logAbort.signal })
      .then(function (r) {
        if (!r.ok) return r.text().then(function (t) { pre.textContent = t; });
        var reader = r.body.getReader(), dec = new TextDecoder();
        function read() {
          return reader.read().then(function (c) {
            if (c.done) return;
            pre.textContent += dec.decode(c.value, { stream: true });
            pre.scrollTop = pre.scrollHeight;
            return read();
          });
        }
        return read();
      }).catch(function () {});
  });

  var form = document.getElementById("token-form");
  if (form) {
    var state = document.getElementById("token-state");
    var show = function () { state.textContent = token() ? "A token is set for this tab." : "No token is set: requests are anonymous."; };
    show();
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var t = document.getElementById("token-secret").value.trim();
      setToken(t);
      api("GET", "/v1/acl/token/self").then(function () { flash("Token set."); })
        .catch(function (e) { flash("Token set, but the agent answered " + e.message); });
      show();
    });
    document.getElementById("token-clear").addEventListener("click", function () { setToken(""); show(); flash("Token cleared."); });
  }
})();
