// csmacd view: animates one run's trace (the rows of `csmacd trace --format
// jsonl`, embedded as JSON) on a bus and a space-time diagram. Text is set
// with textContent only; the page loads nothing from the network.
"use strict";

(function () {
  const root = document.querySelector("[data-csmacd-view]");
  const errors = [];
  function report(message) {
    errors.push(String(message));
    root.setAttribute("data-errors", errors.join(" | "));
  }
  window.addEventListener("error", function (e) {
    report(e.message || "error");
  });
  window.addEventListener("unhandledrejection", function (e) {
    report(e.reason || "unhandled rejection");
  });

  const $ = function (id) {
    return document.getElementById(id);
  };
  const data = JSON.parse($("view-data").textContent);
  const events = data.events;
  const from = data.from_us;
  const until = data.until_us;
  // The station colours of the PNG diagrams (Okabe-Ito, then five more).
  const COLOURS = ["#0072B2", "#009E73", "#CC79A7", "#56B4E9", "#000000", "#6A3D9A", "#8C564B", "#17BECF", "#7F7F7F", "#6B8E23"];
  // Jams and collisions red, as in the PNG diagrams, apart from backoff's orange.
  const JAM = "#C8102E";
  const STATE_COLOURS = {
    idle: "#EBEBEB",
    defer: "#ABD9F4",
    transmit: "#009E73",
    jam: JAM,
    backoff: "#E69F00",
  };
  const colour = function (i) {
    return COLOURS[i % COLOURS.length];
  };
  const name = function (i) {
    return "S" + i;
  };
  const fmt = function (t) {
    return String(Math.round(t * 1e6) / 1e6);
  };

  const stationIndex = new Map();
  data.stations.forEach(function (s, k) {
    stationIndex.set(s.id, k);
  });
  const at = new Map(data.stations.map(function (s) {
    return [s.id, s.at_us];
  }));
  const maxAt = Math.max.apply(null, data.stations.map(function (s) {
    return s.at_us;
  }).concat([data.bus_m / data.speed_m_per_us]));

  // ---- transmissions: each tx-start with what ended it (tx-end or jam) ----
  const transmissions = [];
  (function () {
    const open = new Map();
    const take = function (ev) {
      if (ev.event === "tx-start") {
        const tx = {
          station: ev.station,
          start: ev.time_us,
          end: ev.end_us,
          jam: null,
          collided: false,
          bytes: ev.bytes,
          attempt: ev.attempt,
        };
        transmissions.push(tx);
        open.set(ev.station, tx);
      } else if (ev.event === "collision" || ev.event === "late-collision") {
        const tx = open.get(ev.station);
        if (tx) tx.collided = true;
      } else if (ev.event === "jam") {
        const tx = open.get(ev.station);
        if (tx) {
          tx.jam = ev.time_us;
          tx.end = ev.end_us;
        }
      } else if (ev.event === "tx-end") {
        const tx = open.get(ev.station);
        if (tx) tx.end = ev.time_us;
        open.delete(ev.station);
      }
    };
    data.context.forEach(take);
    events.forEach(take);
  })();

  // Transmissions start in time order: the first that can still be on the
  // wire at t is found by bisection, no later than its longest one back.
  const longest = transmissions.reduce(function (m, tx) {
    return Math.max(m, tx.end - tx.start);
  }, 0);
  function firstTx(t) {
    let lo = 0;
    let hi = transmissions.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (transmissions[mid].start < t - longest - maxAt) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
  // The longest backoff: a bar begun before a window's start may reach into it.
  const longestBackoff = events.reduce(function (m, ev) {
    return ev.event === "backoff" ? Math.max(m, ev.delay_us) : m;
  }, 0);
  function firstEvent(t) {
    let lo = 0;
    let hi = events.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (events[mid].time_us < t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  // ---- station states, replayed from the events ----
  function freshStates() {
    return data.stations.map(function (s) {
      return { id: s.id, state: "idle", since: from, n: null, k: null, r: null, attempt: null, until: null, queue: s.queued, hears: 0 };
    });
  }
  function apply(states, ev) {
    const k = stationIndex.get(ev.station);
    if (k === undefined) return;
    const s = states[k];
    const set = function (state, until) {
      s.state = state;
      s.since = ev.time_us;
      s.until = until === undefined ? null : until;
    };
    switch (ev.event) {
      case "arrival":
        s.queue += 1;
        break;
      case "defer":
        set("defer", ev.end_us);
        break;
      case "tx-start":
        s.attempt = ev.attempt;
        set("transmit", ev.end_us);
        break;
      case "burst-gap":
        set("transmit", ev.end_us);
        break;
      case "jam":
        set("jam", ev.end_us);
        break;
      case "tx-end":
        s.queue = Math.max(0, s.queue - 1);
        s.n = null;
        s.k = null;
        s.r = null;
        s.attempt = null;
        set("idle");
        break;
      case "backoff":
        s.n = ev.n;
        s.k = ev.k === undefined ? null : ev.k;
        s.r = ev.r === undefined ? null : ev.r;
        set("backoff", ev.end_us);
        break;
      case "backoff-end":
        set("idle");
        break;
      case "discard":
        s.queue = Math.max(0, s.queue - 1);
        s.n = null;
        s.k = null;
        s.r = null;
        set("idle");
        break;
      case "signal-arrives":
        s.hears += 1;
        break;
      case "signal-ends":
        s.hears = Math.max(0, s.hears - 1);
        break;
      default:
        break;
    }
  }

  // ---- the clock: `applied` events (those at or before `time`) ----
  let time = from;
  let applied = 0;
  let states = freshStates();
  data.context.forEach(function (ev) {
    apply(states, ev);
  });
  const initial = JSON.stringify(states);
  function seek(t) {
    time = Math.min(Math.max(t, from), until);
    let target = applied;
    while (target < events.length && events[target].time_us <= time) target++;
    while (target > 0 && events[target - 1].time_us > time) target--;
    if (target < applied) {
      states = JSON.parse(initial);
      applied = 0;
    }
    while (applied < target) apply(states, events[applied++]);
  }
  function stepForward() {
    if (applied >= events.length) return;
    const t = events[applied].time_us;
    seek(t);
  }
  function stepBack() {
    if (applied === 0) return;
    const t = events[applied - 1].time_us;
    let k = applied - 1;
    while (k > 0 && events[k - 1].time_us === t) k--;
    states = JSON.parse(initial);
    applied = 0;
    while (applied < k) apply(states, events[applied++]);
    time = k > 0 ? events[k - 1].time_us : from;
  }

  // ---- text ----
  function describe(ev) {
    const s = name;
    switch (ev.event) {
      case "arrival":
        return "a " + ev.bytes + " B frame joins the queue";
      case "queue-full":
        return "a " + ev.bytes + " B frame is refused: queue full";
      case "defer":
        return ev.end_us === undefined ? "carrier sensed: waits for the transmission to end" : "defers: will send at " + fmt(ev.end_us) + " µs (interframe gap)";
      case "tx-start":
        return "attempt " + ev.attempt + ": " + ev.bytes + " B to " + s(ev.peer) + ", until " + fmt(ev.end_us) + " µs";
      case "burst-gap":
        return "burst goes on: gap filled until " + fmt(ev.end_us) + " µs";
      case "signal-arrives":
        return s(ev.peer) + "'s signal arrives here";
      case "signal-ends":
        return s(ev.peer) + "'s signal ends here";
      case "collision":
        return "collision detected";
      case "late-collision":
        return "LATE collision detected";
      case "jam":
        return "jam until " + fmt(ev.end_us) + " µs";
      case "tx-end":
        return "transmission over, no collision seen";
      case "backoff":
        if (ev.k !== undefined && ev.r !== undefined) {
          return "after collision n=" + ev.n + ": k=" + ev.k + ", r=" + ev.r + " drawn from 0.." + (Math.pow(2, ev.k) - 1) + ", waits " + fmt(ev.delay_us) + " µs";
        }
        return "after collision n=" + ev.n + ": waits " + fmt(ev.delay_us) + " µs";
      case "backoff-end":
        return "backoff over: contends again";
      case "discard":
        return "frame discarded after " + ev.n + " collisions";
      case "delivered":
        return "receives " + s(ev.peer) + "'s frame intact (" + fmt(ev.delay_us) + " µs after it was queued)";
      case "corrupted":
        return "receives " + s(ev.peer) + "'s frame GARBLED (undetected collision)";
      default:
        return ev.event;
    }
  }
  // A duration in the unit that suits it: "2 s", "10 ms", "51.2 µs", "1 ns".
  function duration(us) {
    const units = [[1e6, " s"], [1e3, " ms"], [1, " µs"], [1e-3, " ns"]];
    for (let k = 0; k < units.length; k++) {
      if (Math.abs(us) >= units[k][0] || k === units.length - 1) {
        return String(Number((us / units[k][0]).toPrecision(6))) + units[k][1];
      }
    }
    return fmt(us) + " µs";
  }
  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }

  // ---- header, notes ----
  // "2 stations", or for a herd drawn in part "1000 stations (4 of them drawn)".
  function stationsText() {
    const total = data.station_count;
    const drawn = data.stations.length;
    const all = total + " station" + (total === 1 ? "" : "s");
    return drawn < total ? all + " (" + drawn + " of them drawn)" : all;
  }
  document.title = data.title + " · csmacd view";
  $("title").textContent = data.title;
  $("subtitle").textContent =
    stationsText() + " on " + fmt(data.bus_m) + " m, seed " + data.seed +
    ", " + events.length + " events from " + fmt(from) + " to " + fmt(until) + " µs" +
    " (the run lasts " + duration(data.run_us) + "). Slot " + duration(data.slot_us) + ", bit " + duration(data.bit_us) + ".";
  root.setAttribute("data-until-us", String(until));
  root.setAttribute("data-events", String(events.length));
  if (data.left_out.length > 0) {
    $("left-out-panel").hidden = false;
    data.left_out.forEach(function (t) {
      $("left-out").appendChild(el("li", t));
    });
  }
  if (data.error) {
    $("error").hidden = false;
    $("error").textContent = data.error;
  }
  $("bus-note").textContent = "signals spread from their senders at " + Number((data.speed_m_per_us * 1e6).toPrecision(4)).toExponential().replace("e+", "e") + " m/s (" + Number(data.speed_m_per_us.toPrecision(4)) + " m/µs)";

  // ---- legend ----
  [["idle", "idle"], ["defer", "defer"], ["transmit", "transmit"], ["jam", "jam"], ["backoff", "backoff"]].forEach(function (p) {
    const item = el("span", p[1], "legend-item");
    const sw = el("span", undefined, "swatch");
    sw.style.background = STATE_COLOURS[p[0]];
    item.prepend(sw);
    $("legend").appendChild(item);
  });
  $("legend").appendChild(el("span", "· a station's circle: its state; a band above the bus: a signal, in its sender's colour; red: a jam, or on the bus where two signals overlap (a collision)", "legend-item"));

  // ---- stations ----
  const cards = data.stations.map(function (s) {
    const b = el("button", undefined, "station");
    b.type = "button";
    b.setAttribute("data-station", String(s.id));
    b.style.borderTopColor = colour(s.id);
    b.appendChild(el("span", name(s.id), "station-name"));
    b.appendChild(el("span", String(Math.round(s.x_m * 10) / 10) + " m", "station-pos"));
    const st = el("span", "idle", "station-state");
    b.appendChild(st);
    const det = el("span", "", "station-detail");
    b.appendChild(det);
    b.addEventListener("click", function () {
      showHistory(s.id);
    });
    $("stations").appendChild(b);
    return { button: b, state: st, detail: det };
  });

  // ---- history of one station ----
  function showHistory(id) {
    const mine = events.filter(function (ev) {
      return ev.station === id && ev.event !== "signal-arrives" && ev.event !== "signal-ends";
    });
    const count = function (e) {
      return mine.filter(function (ev) {
        return ev.event === e;
      }).length;
    };
    const delays = mine.filter(function (ev) {
      return ev.event === "backoff";
    }).reduce(function (a, ev) {
      return a + ev.delay_us;
    }, 0);
    const sent = transmissions.filter(function (tx) {
      return tx.station === id && tx.start >= from;
    });
    const delivered = events.filter(function (ev) {
      return ev.event === "delivered" && ev.peer === id;
    });
    $("history").hidden = false;
    $("history-title").textContent = name(id) + ": its history in this window";
    $("history-summary").textContent =
      count("arrival") + " frames queued, " + sent.length + " attempts, " + count("collision") + " collisions" +
      (count("late-collision") ? " (+" + count("late-collision") + " late)" : "") + ", " + fmt(delays) + " µs in backoff, " +
      delivered.length + " of its frames delivered" +
      (delivered.length ? " (delays " + delivered.map(function (ev) {
        return fmt(ev.delay_us);
      }).join(", ") + " µs)" : "") + ", " + count("discard") + " discarded.";
    const body = $("history-table").tBodies[0];
    body.textContent = "";
    mine.forEach(function (ev) {
      const tr = el("tr");
      tr.appendChild(el("td", fmt(ev.time_us)));
      tr.appendChild(el("td", ev.event));
      tr.appendChild(el("td", describe(ev)));
      body.appendChild(tr);
    });
    cards.forEach(function (c, k) {
      c.button.setAttribute("aria-pressed", String(data.stations[k].id === id));
    });
  }

  // ---- controls ----
  const playButton = document.querySelector('[data-control="play"]');
  const stepButton = document.querySelector('[data-control="step"]');
  const backButton = document.querySelector('[data-control="back"]');
  const speedSelect = document.querySelector('[data-control="speed"]');
  const scrub = document.querySelector('[data-control="scrub"]');
  const SPEEDS = [0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 100000];
  SPEEDS.forEach(function (v) {
    const o = el("option", v + " µs/s");
    o.value = String(v);
    speedSelect.appendChild(o);
  });
  // About 20 seconds for the whole window.
  const wanted = (until - from) / 20;
  speedSelect.value = String(SPEEDS.find(function (v) {
    return v >= wanted;
  }) || SPEEDS[SPEEDS.length - 1]);

  let playing = false;
  let last = null;
  function setPlaying(p) {
    playing = p && time < until;
    playButton.textContent = playing ? "❚❚ pause" : "▶ play";
    playButton.setAttribute("aria-pressed", String(playing));
    if (playing) {
      last = null;
      requestAnimationFrame(frame);
    }
  }
  function frame(now) {
    if (!playing) return;
    if (last !== null) {
      seek(time + ((now - last) / 1000) * Number(speedSelect.value));
      render();
    }
    last = now;
    if (time >= until) {
      setPlaying(false);
      return;
    }
    requestAnimationFrame(frame);
  }
  playButton.addEventListener("click", function () {
    setPlaying(!playing);
  });
  stepButton.addEventListener("click", function () {
    setPlaying(false);
    stepForward();
    render();
  });
  backButton.addEventListener("click", function () {
    setPlaying(false);
    stepBack();
    render();
  });
  scrub.addEventListener("input", function () {
    setPlaying(false);
    seek(from + (Number(scrub.value) / 1000) * (until - from));
    render();
  });
  speedSelect.addEventListener("change", render);
  document.addEventListener("keydown", function (e) {
    const tag = e.target && e.target.tagName;
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return;
    const shift = function (d) {
      const i = speedSelect.selectedIndex + d;
      if (i >= 0 && i < SPEEDS.length) speedSelect.selectedIndex = i;
    };
    switch (e.key) {
      case " ":
        setPlaying(!playing);
        break;
      case "ArrowRight":
        stepButton.click();
        break;
      case "ArrowLeft":
        backButton.click();
        break;
      case "+":
      case "=":
        shift(1);
        break;
      case "-":
        shift(-1);
        break;
      case "Home":
        setPlaying(false);
        states = JSON.parse(initial);
        applied = 0;
        time = from;
        break;
      case "End":
        setPlaying(false);
        seek(until);
        break;
      default:
        if (/^[0-9]$/.test(e.key) && stationIndex.has(Number(e.key))) {
          showHistory(Number(e.key));
        } else {
          return;
        }
    }
    e.preventDefault();
    render();
  });

  // ---- the diagram's span ----
  const spanSelect = $("span");
  (function () {
    const whole = el("option", "the whole window");
    whole.value = "0";
    spanSelect.appendChild(whole);
    [10, 50, 200, 1000, 5000].forEach(function (m) {
      const w = Math.round(m * Math.max(maxAt, data.slot_us / 10));
      if (w < until - from) {
        const o = el("option", "the last " + fmt(w) + " µs");
        o.value = String(w);
        spanSelect.appendChild(o);
      }
    });
    // A dense window reads better (and draws faster) a part at a time:
    // about 150 transmissions in view.
    if (transmissions.length > 300) {
      const want = ((until - from) * 150) / transmissions.length;
      const options = Array.from(spanSelect.options).map(function (o) {
        return Number(o.value);
      }).filter(function (v) {
        return v > 0 && v <= want;
      });
      if (options.length > 0) spanSelect.value = String(options[options.length - 1]);
    }
    spanSelect.addEventListener("change", render);
  })();

  // ---- drawing ----
  const bus = $("bus");
  const st = $("spacetime");
  const MARGIN = 60;
  const xOf = function (canvas, xm) {
    return MARGIN + (xm / Math.max(data.bus_m, 1e-9)) * (canvas.width - 2 * MARGIN);
  };
  // Where a transmission's signal is at time t: distances from its sender
  // [near, far] in metres, or null.
  function reach(t0, t1, t) {
    if (t < t0) return null;
    const far = (t - t0) * data.speed_m_per_us;
    const near = Math.max(0, (t - t1) * data.speed_m_per_us);
    if (near > data.bus_m + 1e-9) return null;
    return [near, far];
  }
  function xm(id) {
    return at.get(id) * data.speed_m_per_us;
  }
  function live(t) {
    const out = [];
    for (let i = firstTx(t); i < transmissions.length && transmissions[i].start <= t; i++) {
      if (t < transmissions[i].end + maxAt) out.push(transmissions[i]);
    }
    return out;
  }
  function drawBus() {
    const c = bus.getContext("2d");
    c.clearRect(0, 0, bus.width, bus.height);
    const y = 100;
    c.strokeStyle = "#444";
    c.lineWidth = 3;
    c.beginPath();
    c.moveTo(xOf(bus, 0), y);
    c.lineTo(xOf(bus, data.bus_m), y);
    c.stroke();
    const spans = [];
    const lanes = live(time);
    lanes.forEach(function (tx) {
      const r = reach(tx.start, tx.end, time);
      if (!r) return;
      const x0 = xm(tx.station);
      // One lane per station (they repeat beyond six), so a band stays put.
      const yy = y - 12 - (stationIndex.get(tx.station) % 6) * 10;
      const seg = function (a, b, col) {
        const lo = Math.max(0, a);
        const hi = Math.min(data.bus_m, b);
        if (hi <= lo) return;
        c.fillStyle = col;
        c.fillRect(xOf(bus, lo), yy - 3, Math.max(1, xOf(bus, hi) - xOf(bus, lo)), 6);
      };
      const paint = function (near, far, col) {
        seg(x0 + near, x0 + far, col);
        seg(x0 - far, x0 - near, col);
      };
      paint(r[0], r[1], colour(tx.station));
      if (tx.jam !== null) {
        const j = reach(tx.jam, tx.end, time);
        if (j) paint(j[0], j[1], JAM);
      }
      spans.push([Math.max(0, x0 - r[1]), Math.max(0, x0 - r[0]), tx.station]);
      spans.push([x0 + r[0], Math.min(data.bus_m, x0 + r[1]), tx.station]);
    });
    // Where two stations' signals overlap on the wire: a collision.
    const cuts = [];
    spans.forEach(function (a, i) {
      spans.slice(i + 1).forEach(function (b) {
        if (a[2] === b[2]) return;
        const lo = Math.max(a[0], b[0]);
        const hi = Math.min(a[1], b[1]);
        if (hi > lo) cuts.push([lo, hi]);
      });
    });
    c.fillStyle = JAM;
    cuts.forEach(function (s) {
      c.fillRect(xOf(bus, s[0]), y - 4, Math.max(2, xOf(bus, s[1]) - xOf(bus, s[0])), 8);
    });
    // Stations.
    c.font = "13px sans-serif";
    c.textAlign = "center";
    const crowded = data.stations.length > 24;
    data.stations.forEach(function (s, k) {
      const x = xOf(bus, s.x_m);
      const state = states[k].state;
      c.fillStyle = STATE_COLOURS[state];
      c.strokeStyle = colour(s.id);
      c.lineWidth = 2;
      c.beginPath();
      c.arc(x, y, crowded ? 4 : 8, 0, 2 * Math.PI);
      c.fill();
      c.stroke();
      if (!crowded || k % Math.ceil(data.stations.length / 24) === 0) {
        c.fillStyle = "#222";
        c.fillText(name(s.id), x, y + 26);
      }
    });
    c.textAlign = "left";
    c.fillStyle = "#444";
    c.fillText("0 m", xOf(bus, 0) - 20, y + 44);
    c.textAlign = "right";
    c.fillText(fmt(data.bus_m) + " m", xOf(bus, data.bus_m) + 20, y + 44);
    c.textAlign = "left";
    c.font = "bold 14px sans-serif";
    c.fillStyle = "#222";
    c.fillText("t = " + fmt(time) + " µs", 8, 18);
  }
  function drawSpaceTime() {
    const c = st.getContext("2d");
    c.clearRect(0, 0, st.width, st.height);
    const span = Number(spanSelect.value);
    const top = 30;
    const bottom = st.height - 20;
    let t0 = from;
    let t1 = until;
    if (span > 0) {
      t1 = Math.max(from + span, time);
      t0 = t1 - span;
    }
    const yOf = function (t) {
      return top + ((t - t0) / Math.max(t1 - t0, 1e-9)) * (bottom - top);
    };
    const x = function (m) {
      return xOf(st, Math.min(Math.max(m, 0), data.bus_m));
    };
    // Axes and time ticks.
    c.strokeStyle = "#bbb";
    c.lineWidth = 1;
    c.font = "12px sans-serif";
    c.fillStyle = "#444";
    c.textAlign = "right";
    const stepUs = niceStep((t1 - t0) / 8);
    for (let t = Math.ceil(t0 / stepUs) * stepUs; t <= t1 + 1e-9; t += stepUs) {
      const yy = yOf(t);
      c.beginPath();
      c.moveTo(MARGIN - 4, yy);
      c.lineTo(st.width - MARGIN, yy);
      c.stroke();
      c.fillText(fmt(t), MARGIN - 6, yy + 4);
    }
    c.textAlign = "left";
    c.fillText("µs", 4, top - 10);
    data.stations.forEach(function (s) {
      c.strokeStyle = "#ddd";
      c.beginPath();
      c.moveTo(x(s.x_m), top);
      c.lineTo(x(s.x_m), bottom);
      c.stroke();
    });
    c.save();
    c.beginPath();
    c.rect(0, top, st.width, Math.max(0, Math.min(yOf(time), bottom) - top));
    c.clip();
    const band = function (xs, s, e, fill) {
      const L = data.bus_m;
      const v = data.speed_m_per_us;
      c.fillStyle = fill;
      c.beginPath();
      c.moveTo(x(xs), yOf(s));
      c.lineTo(x(0), yOf(s + xs / v));
      c.lineTo(x(0), yOf(e + xs / v));
      c.lineTo(x(xs), yOf(e));
      c.lineTo(x(L), yOf(e + (L - xs) / v));
      c.lineTo(x(L), yOf(s + (L - xs) / v));
      c.closePath();
      c.fill();
    };
    for (let i = firstTx(t0); i < transmissions.length; i++) {
      const tx = transmissions[i];
      if (tx.start > time || tx.start > t1) break;
      if (tx.end + maxAt < t0) continue;
      const xs = xm(tx.station);
      band(xs, tx.start, tx.end, hexAlpha(colour(tx.station), 0.45));
      if (tx.jam !== null) band(xs, tx.jam, tx.end, hexAlpha(JAM, 0.75));
    }
    // Marks: collisions, backoffs, deliveries, up to the current time.
    c.lineWidth = 2;
    for (let i = firstEvent(t0 - longestBackoff); i < applied; i++) {
      const ev = events[i];
      if (ev.time_us < t0 && !(ev.event === "backoff" && ev.end_us >= t0)) continue;
      const k = stationIndex.get(ev.station);
      if (k === undefined) continue;
      const px = x(data.stations[k].x_m);
      const py = yOf(ev.time_us);
      if (ev.event === "collision" || ev.event === "late-collision") {
        c.strokeStyle = JAM;
        c.beginPath();
        c.moveTo(px - 6, py - 6);
        c.lineTo(px + 6, py + 6);
        c.moveTo(px + 6, py - 6);
        c.lineTo(px - 6, py + 6);
        c.stroke();
      } else if (ev.event === "backoff") {
        const side = px > st.width - MARGIN - 20 ? -1 : 1;
        c.fillStyle = STATE_COLOURS.backoff;
        c.fillRect(px + side * 6 - (side < 0 ? 5 : 0), py, 5, Math.max(1, yOf(Math.min(ev.end_us, time)) - py));
        // The label on a white ground, readable over the bands.
        const label = "n=" + ev.n + (ev.r !== undefined ? " r=" + ev.r : "");
        const w = c.measureText(label).width;
        const lx = side > 0 ? px + 14 : px - 14 - w;
        c.fillStyle = "rgba(255,255,255,0.85)";
        c.fillRect(lx - 2, py + 1, w + 4, 15);
        c.fillStyle = "#7a4d00";
        c.fillText(label, lx, py + 12);
      } else if (ev.event === "delivered" || ev.event === "corrupted") {
        c.strokeStyle = ev.event === "delivered" ? "#009E73" : JAM;
        c.beginPath();
        c.arc(px, py, 6, 0, 2 * Math.PI);
        c.stroke();
      }
    }
    c.restore();
    // The current time.
    if (time >= t0 && time <= t1) {
      c.strokeStyle = "#222";
      c.setLineDash([4, 3]);
      c.beginPath();
      c.moveTo(MARGIN - 4, yOf(time));
      c.lineTo(st.width - MARGIN + 4, yOf(time));
      c.stroke();
      c.setLineDash([]);
    }
    c.textAlign = "center";
    c.fillStyle = "#222";
    data.stations.forEach(function (s, k) {
      if (data.stations.length <= 24 || k % Math.ceil(data.stations.length / 24) === 0) {
        c.fillText(name(s.id), x(s.x_m), top - 10);
      }
    });
    c.textAlign = "left";
  }
  function niceStep(raw) {
    const p = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1e-6))));
    const m = raw / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
  }
  function hexAlpha(hex, a) {
    const n = parseInt(hex.slice(1), 16);
    return "rgba(" + (n >> 16) + "," + ((n >> 8) & 255) + "," + (n & 255) + "," + a + ")";
  }

  function renderStations() {
    states.forEach(function (s, k) {
      const card = cards[k];
      card.state.textContent = s.state;
      card.button.setAttribute("data-state", s.state);
      card.state.style.background = STATE_COLOURS[s.state];
      card.state.style.color = s.state === "jam" ? "#fff" : "";
      const parts = [];
      if (s.attempt !== null && (s.state === "transmit" || s.state === "jam")) parts.push("attempt " + s.attempt);
      const drawn = [];
      if (s.n !== null) drawn.push("n=" + s.n);
      if (s.k !== null) drawn.push("k=" + s.k);
      if (s.r !== null) drawn.push("r=" + s.r);
      if (drawn.length > 0) parts.push((s.state === "backoff" ? "" : "last backoff ") + drawn.join(" "));
      if (s.until !== null && s.state !== "idle") parts.push("until " + fmt(s.until) + " µs");
      if (s.queue > 0) parts.push(s.queue + (s.queue === 1 ? " frame" : " frames") + " in queue");
      card.detail.textContent = parts.join(", ");
    });
  }
  function renderNow() {
    const list = $("now");
    list.textContent = "";
    $("now-title").textContent = applied === 0 ? "The latest events" : "The latest events, at " + fmt(events[applied - 1].time_us) + " µs";
    if (applied === 0) {
      list.appendChild(el("li", "Nothing has happened yet: press step (Right arrow) or play (Space)."));
      return;
    }
    const t = events[applied - 1].time_us;
    let k = applied - 1;
    while (k > 0 && events[k - 1].time_us === t) k--;
    const shown = events.slice(k, Math.min(applied, k + 12));
    shown.forEach(function (ev) {
      const li = el("li");
      li.appendChild(el("span", fmt(ev.time_us) + " µs ", "when"));
      li.appendChild(el("strong", name(ev.station) + " " + ev.event));
      li.appendChild(document.createTextNode(": " + describe(ev)));
      list.appendChild(li);
    });
    if (applied - k > shown.length) list.appendChild(el("li", "and " + (applied - k - shown.length) + " more at this instant"));
  }
  function render() {
    root.setAttribute("data-time-us", String(time));
    $("clock").textContent = "t = " + fmt(time) + " µs of " + fmt(until) + " µs · " + applied + " of " + events.length + " events done";
    scrub.value = String(Math.round(((time - from) / Math.max(until - from, 1e-9)) * 1000));
    renderStations();
    renderNow();
    drawBus();
    drawSpaceTime();
  }

  // ---- a lesson: predict, then watch ----
  // Markdown as the lesson texts use it (headings, paragraphs, lists,
  // **bold**, `code`, indented or fenced code blocks, tables), built as elements with textContent: no text of the
  // lesson is ever parsed as markup.
  function inline(parent, text) {
    text.split(/(\*\*[^*]+\*\*|`[^`]+`)/).forEach(function (part) {
      if (/^\*\*[^*]+\*\*$/.test(part)) parent.appendChild(el("strong", part.slice(2, -2)));
      else if (/^`[^`]+`$/.test(part)) parent.appendChild(el("code", part.slice(1, -1)));
      else if (part) parent.appendChild(document.createTextNode(part));
    });
    return parent;
  }
  function markdownBlock(block) {
    const lines = block.split("\n");
    // Code: lines indented by four spaces (or a tab), or fenced by ```,
    // kept as written, line by line.
    const fenced = lines.length > 1 && /^\s*```/.test(lines[0]) && /^\s*```\s*$/.test(lines[lines.length - 1]);
    if (fenced || lines.every(function (l) { return /^( {4}|\t)/.test(l); })) {
      const body = fenced ? lines.slice(1, -1) : lines.map(function (l) { return l.replace(/^( {4}|\t)/, ""); });
      const pre = el("pre");
      pre.appendChild(el("code", body.join("\n")));
      return pre;
    }
    // A table: every line a row between pipes, the second the rule under
    // the header.
    if (lines.length > 2 && lines.every(function (l) { return /^\s*\|.*\|\s*$/.test(l); })) {
      const cells = function (line) {
        return line.trim().slice(1, -1).split("|").map(function (c) { return c.trim(); });
      };
      const table = el("table");
      lines.forEach(function (line, i) {
        if (i === 1 && /^[\s|:-]+$/.test(line)) return;
        const tr = el("tr");
        cells(line).forEach(function (c) { tr.appendChild(inline(el(i === 0 ? "th" : "td"), c)); });
        table.appendChild(tr);
      });
      return table;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(lines[0].trim());
    if (heading && lines.length === 1) return inline(el("h3"), heading[2]);
    if (/^\s*[-*]\s+/.test(lines[0])) {
      const ul = el("ul");
      let item = null;
      lines.forEach(function (line) {
        const m = /^\s*[-*]\s+(.*)$/.exec(line);
        if (m) {
          if (item !== null) ul.appendChild(inline(el("li"), item));
          item = m[1];
        } else {
          item = (item === null ? "" : item + " ") + line.trim();
        }
      });
      if (item !== null) ul.appendChild(inline(el("li"), item));
      return ul;
    }
    return inline(el("p"), lines.map(function (l) { return l.trim(); }).join(" "));
  }
  let reveal = null;
  if (data.lesson) {
    const lesson = data.lesson;
    $("lesson").hidden = false;
    $("lesson-title").textContent = (lesson.number === null ? "" : "Lesson " + lesson.number + ": ") + lesson.title;
    // The setup (first paragraph after the heading) is shown before the
    // student answers; the rest of the text gives the numbers away.
    const blocks = lesson.text.split(/\n\s*\n/).filter(function (p) {
      return p.trim() && !/^#[^\n]*$/.test(p.trim());
    });
    // A setting that ends mid-sentence ("... as follows:", "... is then")
    // goes on in the next block: shown with it.
    let setup = 0;
    while (setup < blocks.length) {
      $("lesson-setup").appendChild(markdownBlock(blocks[setup]));
      setup += 1;
      if (/[.?!)]["”’]?\s*$/.test(blocks[setup - 1].trim())) break;
    }
    blocks.slice(setup).forEach(function (p) {
      $("lesson-rest").appendChild(markdownBlock(p));
    });
    // A lesson file's questions are its own, asked with their unit and
    // graded; other lessons ask for the numbers they promise.
    const graded = lesson.asks.length > 0;
    const asked = graded
      ? lesson.asks.map(function (a) { return { label: a.ask + (a.unit ? " (" + a.unit + ")" : "") }; })
      : lesson.questions.map(function (q) { return { label: q.what + "?" }; });
    const items = [];
    const inputs = asked.map(function (q, i) {
      const li = el("li");
      if (graded) li.setAttribute("data-question", String(i));
      const label = el("label", q.label + " ");
      const input = el("input");
      input.name = "q" + i;
      input.size = 14;
      input.setAttribute("aria-label", q.label);
      label.appendChild(input);
      li.appendChild(label);
      $("questions").appendChild(li);
      items.push(li);
      return input;
    });
    // Right when within the question's tolerance of the run's value; a
    // unit typed after the number is allowed.
    function grade(a, text) {
      if (a.value === null) return false;
      let t = text.trim();
      if (a.unit && t.endsWith(a.unit)) t = t.slice(0, -a.unit.length).trim();
      t = t.replace(",", ".");
      if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(t)) return false;
      return Math.abs(Number(t) - a.value) <= a.tolerance * (1 + 1e-12) + 1e-12;
    }
    reveal = function () {
      const body = $("numbers").tBodies[0];
      body.textContent = "";
      if (graded) {
        let right = 0;
        lesson.asks.forEach(function (a, i) {
          const ok = grade(a, inputs[i].value);
          right += ok ? 1 : 0;
          items[i].setAttribute("data-verdict", ok ? "right" : "wrong");
          inputs[i].readOnly = true;
          const said = inputs[i].value.trim() === "" ? "no answer" : "";
          items[i].appendChild(el("span", (ok ? " ✓ right: " : " ✗ " + (said ? said + ": " : "")) + "the run says " + a.shown, ok ? "verdict right" : "verdict wrong"));
        });
        $("score").textContent = right + " of " + lesson.asks.length + " right.";
        $("score").hidden = false;
        const head = $("numbers").tHead.rows[0];
        head.textContent = "";
        ["what the lesson promises", "expected", "this run"].forEach(function (h) { head.appendChild(el("th", h)); });
        lesson.questions.forEach(function (q) {
          const tr = el("tr");
          tr.appendChild(el("td", q.what));
          tr.appendChild(el("td", q.expected));
          tr.appendChild(el("td", q.seen + (q.ok ? "" : " (differs)")));
          body.appendChild(tr);
        });
      } else {
        lesson.questions.forEach(function (q, i) {
          const tr = el("tr");
          tr.appendChild(el("td", q.what));
          tr.appendChild(el("td", inputs[i].value || "(no answer)"));
          tr.appendChild(el("td", q.expected));
          tr.appendChild(el("td", q.seen + (q.ok ? "" : " (differs)")));
          body.appendChild(tr);
        });
      }
      if (lesson.table.length > 0) {
        const t = $("lesson-table");
        t.hidden = false;
        lesson.table.forEach(function (row, i) {
          const tr = el("tr");
          row.forEach(function (cell) {
            tr.appendChild(el(i === 0 ? "th" : "td", cell));
          });
          t.tBodies[0].appendChild(tr);
        });
      }
      $("answers").hidden = false;
      if (graded) {
        $("predict-button").hidden = true;
      } else {
        $("predict").hidden = true;
      }
    };
    $("predict").addEventListener("submit", function (e) {
      e.preventDefault();
      reveal();
      setPlaying(true);
    });
  }

  // ---- csmacd serve: the form ----
  if (data.form) {
    const f = data.form;
    $("serve").hidden = false;
    $("f-stations").value = f.stations;
    $("f-positions").value = f.positions;
    $("f-length").value = f.length;
    $("f-frame").value = f.frame;
    $("f-seed").value = f.seed;
    $("f-until").value = f.until;
    const keep = el("option", "as in the scenario");
    keep.value = "";
    $("f-policy").appendChild(keep);
    f.policies.forEach(function (p) {
      const o = el("option", p);
      o.value = p;
      $("f-policy").appendChild(o);
    });
    $("f-policy").value = f.policy;
    $("caps").textContent = f.caps;
    $("scenario-toml").textContent = f.scenario;
    // The address asks for this run again (the form's fields in its query
    // string), also after the form was posted to /run.
    if (location.protocol === "http:" || location.protocol === "https:") {
      history.replaceState(null, "", "/" + (f.query ? "?" + f.query : "") + location.hash);
    }
    $("share").href = location.href;
    $("share").textContent = location.href;
  }

  // ---- a fragment chooses an instant: #t=123.4, #step=3, #station=1 ----
  function fromFragment() {
    const params = new URLSearchParams(location.hash.replace(/^#/, ""));
    if (params.has("t")) seek(Number(params.get("t")));
    if (params.has("step")) {
      for (let i = 0; i < Number(params.get("step")); i++) stepForward();
    }
    if (params.has("station")) showHistory(Number(params.get("station")));
    if (params.has("answers") && reveal) {
      // #answers=0.5;6.4;12 fills the inputs in order and submits them.
      params.get("answers").split(";").forEach(function (v, i) {
        const input = document.getElementsByName("q" + i)[0];
        if (input) input.value = v;
      });
      $("predict").requestSubmit();
    } else if (params.has("answered") && reveal) reveal();
  }
  try {
    fromFragment();
    render();
  } catch (e) {
    report(e && e.stack ? e.stack : e);
  }
})();
