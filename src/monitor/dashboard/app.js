// The wirebus dashboard: polls the monitor's JSON endpoints (the same an operator's
// tools read) and redraws. It shows nothing the endpoints do not: rates are the
// differences of /varz counters over /varz's own clock. Text from the server (client
// names, subjects, channel names) is only ever set as text, never as markup.
'use strict';

(() => {
  const cfg = JSON.parse(document.getElementById('endpoints').textContent);
  const has = (path) => cfg.paths.includes(path);
  const params = new URLSearchParams(location.search);
  const REFRESH_MS = Math.max(250, Number(params.get('refresh')) || 1000);
  /** Points kept for the charts: five minutes at the default refresh. */
  const HISTORY = Math.round((5 * 60 * 1000) / REFRESH_MS);

  const state = {
    sort: 'msgs_to',
    prev: null,
    times: [],
    msgsIn: [],
    msgsOut: [],
    bytesIn: [],
    bytesOut: [],
    charts: null,
  };
  // Read by the browser tests: how many refreshes ran, and the last /varz drawn.
  const exposed = { ticks: 0, varz: null, errors: 0 };
  window.wbDashboard = exposed;

  // ---- small DOM helpers -----------------------------------------------------------

  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') el.className = v;
      else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? '' : String(v));
    }
    for (const c of children) {
      if (c === undefined || c === null) continue;
      el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return el;
  }

  const num = (n) => (typeof n === 'number' ? n.toLocaleString('en-US') : '–');

  function bytes(n) {
    if (typeof n !== 'number') return '–';
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    let v = n;
    while (v >= 1024 && i < units.length - 1) {
      v /= 1024;
      i++;
    }
    return `${i === 0 ? v : v.toFixed(1)} ${units[i]}`;
  }

  function rate(n) {
    if (n >= 1e6) return `${(n / 1e6).toFixed(2)}M`;
    if (n >= 1e4) return `${(n / 1e3).toFixed(1)}k`;
    return n.toFixed(n < 10 ? 1 : 0);
  }

  function card(label, value, field, warn) {
    return h(
      'div',
      { class: warn ? 'card warn' : 'card' },
      h('div', { class: 'label' }, label),
      h('div', { class: 'value', 'data-field': field }, value),
    );
  }

  /**
   * Redraws a table: columns are { label, value(row), num, sort }; a column with a
   * sort key is clickable and asks the server to sort by it.
   */
  function table(id, columns, rows, empty) {
    const el = document.getElementById(id);
    const head = h(
      'tr',
      null,
      ...columns.map((c) =>
        h(
          'th',
          {
            class: [
              c.num ? 'num' : '',
              c.sort ? 'sortable' : '',
              c.sort === state.sort ? 'sorted' : '',
            ]
              .filter(Boolean)
              .join(' '),
            title: c.sort ? `sort by ${c.sort}` : undefined,
            onclick: c.sort
              ? () => {
                  state.sort = c.sort;
                  void tick(false);
                }
              : undefined,
          },
          c.label,
        ),
      ),
    );
    const body = rows.length
      ? rows.map((r) =>
          h('tr', null, ...columns.map((c) => h('td', { class: c.num ? 'num' : '' }, c.value(r)))),
        )
      : [h('tr', null, h('td', { class: 'empty', colspan: columns.length }, empty))];
    el.replaceChildren(h('thead', null, head), h('tbody', null, ...body));
  }

  async function get(path) {
    const res = await fetch(cfg.base + path, { cache: 'no-store' });
    if (!res.ok) throw new Error(`${path}: HTTP ${res.status}`);
    return res.json();
  }

  function uptimeOf(varz) {
    return varz.uptime || '–';
  }

  // ---- sections -----------------------------------------------------------------

  function renderServer(v) {
    document.getElementById('server-name').textContent = v.server_name || v.server_id || '';
    document
      .getElementById('server')
      .replaceChildren(
        card('Version', v.version, 'version'),
        card('Uptime', uptimeOf(v), 'uptime'),
        card('CPU', `${(v.cpu ?? 0).toFixed(1)} %`, 'cpu'),
        card('Memory', bytes(v.mem), 'mem'),
        card('Connections', num(v.connections), 'connections'),
        card('Total connections', num(v.total_connections), 'total_connections'),
        card('Subscriptions', num(v.subscriptions), 'subscriptions'),
        card('Slow consumers', num(v.slow_consumers), 'slow_consumers', v.slow_consumers > 0),
        card('Messages in', num(v.in_msgs), 'in_msgs'),
        card('Messages out', num(v.out_msgs), 'out_msgs'),
        card('Bytes in', bytes(v.in_bytes), 'in_bytes'),
        card('Bytes out', bytes(v.out_bytes), 'out_bytes'),
      );
  }

  /** The width a chart may take: its figure's, less the figure's padding. */
  function chartWidth(el) {
    const figure = el.parentElement;
    return Math.max(200, (figure ? figure.clientWidth - 16 : el.clientWidth) || 400);
  }

  function chart(el, label) {
    const width = chartWidth(el);
    return new uPlot(
      {
        width,
        height: 180,
        legend: { live: false },
        cursor: { drag: { x: false, y: false } },
        scales: { x: { time: true } },
        axes: [{}, { values: (_u, ticks) => ticks.map(rate), size: 60 }],
        series: [
          {},
          { label: `${label} in`, stroke: '#3b32ca', width: 2 },
          { label: `${label} out`, stroke: '#0e9384', width: 2 },
        ],
      },
      [[], [], []],
      el,
    );
  }

  function renderRates(v) {
    const t = Date.parse(v.now) / 1000;
    const prev = state.prev;
    state.prev = {
      t,
      in_msgs: v.in_msgs,
      out_msgs: v.out_msgs,
      in_bytes: v.in_bytes,
      out_bytes: v.out_bytes,
    };
    if (prev === null || t <= prev.t) return;
    const dt = t - prev.t;
    state.times.push(t);
    state.msgsIn.push((v.in_msgs - prev.in_msgs) / dt);
    state.msgsOut.push((v.out_msgs - prev.out_msgs) / dt);
    state.bytesIn.push((v.in_bytes - prev.in_bytes) / dt);
    state.bytesOut.push((v.out_bytes - prev.out_bytes) / dt);
    for (const a of [state.times, state.msgsIn, state.msgsOut, state.bytesIn, state.bytesOut]) {
      if (a.length > HISTORY) a.splice(0, a.length - HISTORY);
    }
    if (typeof uPlot === 'undefined') return;
    if (state.charts === null) {
      state.charts = {
        msgs: chart(document.getElementById('chart-msgs'), 'msgs/s'),
        bytes: chart(document.getElementById('chart-bytes'), 'bytes/s'),
      };
    }
    state.charts.msgs.setData([state.times, state.msgsIn, state.msgsOut]);
    state.charts.bytes.setData([state.times, state.bytesIn, state.bytesOut]);
  }

  function renderConnections(connz) {
    document.getElementById('connections-count').textContent =
      `${num(connz.num_connections)} open${connz.total > connz.limit ? `, top ${connz.limit}` : ''}`;
    table(
      'connections',
      [
        { label: 'cid', value: (c) => c.cid, num: true },
        { label: 'name', value: (c) => c.name || '' },
        { label: 'lang', value: (c) => [c.lang, c.version].filter(Boolean).join(' ') },
        { label: 'account', value: (c) => c.account || '' },
        { label: 'address', value: (c) => `${c.ip}:${c.port}` },
        { label: 'rtt', value: (c) => c.rtt || '' },
        { label: 'subs', value: (c) => num(c.subscriptions), num: true, sort: 'subs' },
        { label: 'pending', value: (c) => bytes(c.pending_bytes), num: true, sort: 'pending' },
        { label: 'msgs in', value: (c) => num(c.in_msgs), num: true, sort: 'msgs_from' },
        { label: 'msgs out', value: (c) => num(c.out_msgs), num: true, sort: 'msgs_to' },
        { label: 'bytes in', value: (c) => bytes(c.in_bytes), num: true, sort: 'bytes_from' },
        { label: 'bytes out', value: (c) => bytes(c.out_bytes), num: true, sort: 'bytes_to' },
        { label: 'idle', value: (c) => c.idle, num: true, sort: 'idle' },
      ],
      connz.connections || [],
      'no connections',
    );
  }

  function renderClosed(closed) {
    const rows = (closed.connections || []).slice(-10).reverse();
    table(
      'closed',
      [
        { label: 'cid', value: (c) => c.cid, num: true },
        { label: 'name', value: (c) => c.name || '' },
        { label: 'address', value: (c) => `${c.ip}:${c.port}` },
        { label: 'reason', value: (c) => c.reason || '' },
        { label: 'stopped', value: (c) => (c.stop ? new Date(c.stop).toLocaleTimeString() : '') },
        { label: 'msgs in', value: (c) => num(c.in_msgs), num: true },
        { label: 'msgs out', value: (c) => num(c.out_msgs), num: true },
      ],
      rows,
      'none closed',
    );
  }

  function renderSubjects(subsz) {
    document.getElementById('subscriptions-count').textContent =
      `${num(subsz.num_subscriptions)} subscriptions`;
    const bySubject = new Map();
    for (const s of subsz.subscriptions_list || []) {
      const key = s.queue ? `${s.subject} (${s.queue})` : s.subject;
      const cur = bySubject.get(key) || { subject: key, msgs: 0, subs: 0 };
      cur.msgs += s.msgs || 0;
      cur.subs += 1;
      bySubject.set(key, cur);
    }
    const rows = [...bySubject.values()].sort((a, b) => b.msgs - a.msgs).slice(0, 10);
    table(
      'subjects',
      [
        { label: 'subject', value: (r) => r.subject },
        { label: 'subscriptions', value: (r) => num(r.subs), num: true },
        { label: 'messages delivered', value: (r) => num(r.msgs), num: true },
      ],
      rows,
      'no subscriptions',
    );
  }

  function renderCluster(v, routez) {
    const c = v.cluster || {};
    document
      .getElementById('cluster')
      .replaceChildren(
        c.name
          ? h(
              'p',
              null,
              `Cluster ${c.name}, route port ${c.cluster_port ?? c.port ?? '–'}`,
              c.urls?.length ? `, routes to ${c.urls.join(', ')}` : '',
            )
          : h('p', { class: 'empty' }, 'not clustered'),
      );
    table(
      'routes',
      [
        { label: 'rid', value: (r) => r.rid, num: true },
        { label: 'server', value: (r) => r.remote_name || r.remote_id || '' },
        { label: 'address', value: (r) => `${r.ip}:${r.port}` },
        { label: 'subs', value: (r) => num(r.subscriptions), num: true },
        { label: 'pending', value: (r) => bytes(r.pending_size), num: true },
        { label: 'msgs in', value: (r) => num(r.in_msgs), num: true },
        { label: 'msgs out', value: (r) => num(r.out_msgs), num: true },
      ],
      (routez && routez.routes) || [],
      'no routes',
    );
  }

  async function renderStreaming() {
    const [serverz, channelsz, clientsz, ft] = await Promise.all([
      get('/streaming/serverz'),
      get('/streaming/channelsz?subs=1&limit=1024'),
      get('/streaming/clientsz?limit=1024'),
      has('/streaming/isFTActive')
        ? fetch(`${cfg.base}/streaming/isFTActive`, { cache: 'no-store' }).then((r) => r.status)
        : Promise.resolve(0),
    ]);
    document.getElementById('streaming').hidden = false;
    const role = serverz.role ? `, ${serverz.role}` : '';
    document.getElementById('streaming-state').textContent =
      `${serverz.state || ''}${role}${ft === 200 ? ', FT active' : ''}`;
    document
      .getElementById('streaming-server')
      .replaceChildren(
        card('Cluster id', serverz.cluster_id, 'streaming_cluster_id'),
        card('Clients', num(serverz.clients), 'streaming_clients'),
        card('Channels', num(serverz.channels), 'streaming_channels'),
        card('Subscriptions', num(serverz.subscriptions), 'streaming_subscriptions'),
        card('Messages', num(serverz.total_msgs), 'streaming_total_msgs'),
        card('Bytes', bytes(serverz.total_bytes), 'streaming_total_bytes'),
      );
    const channels = channelsz.channels || [];
    table(
      'channels',
      [
        { label: 'channel', value: (c) => c.name },
        { label: 'msgs', value: (c) => num(c.msgs), num: true },
        { label: 'bytes', value: (c) => bytes(c.bytes), num: true },
        { label: 'first seq', value: (c) => num(c.first_seq), num: true },
        { label: 'last seq', value: (c) => num(c.last_seq), num: true },
        { label: 'subscriptions', value: (c) => num((c.subscriptions || []).length), num: true },
      ],
      channels,
      'no channels',
    );
    const subs = channels.flatMap((c) =>
      (c.subscriptions || []).map((s) => ({ channel: c.name, ...s })),
    );
    table(
      'streaming-subs',
      [
        { label: 'channel', value: (s) => s.channel },
        { label: 'client', value: (s) => s.client_id },
        { label: 'durable', value: (s) => s.durable_name || '' },
        { label: 'queue', value: (s) => s.queue_name || '' },
        { label: 'last sent', value: (s) => num(s.last_sent), num: true },
        { label: 'pending', value: (s) => num(s.pending_count), num: true },
        { label: 'in flight', value: (s) => num(s.max_inflight), num: true },
        {
          label: 'offline',
          value: (s) => (s.is_offline ? h('span', { class: 'yes' }, 'yes') : ''),
          num: true,
        },
        {
          label: 'stalled',
          value: (s) => (s.is_stalled ? h('span', { class: 'yes' }, 'yes') : ''),
          num: true,
        },
      ],
      subs,
      'no subscriptions',
    );
    table(
      'streaming-clients',
      [
        { label: 'client id', value: (c) => c.id },
        { label: 'heartbeat inbox', value: (c) => c.hb_inbox },
      ],
      clientsz.clients || [],
      'no clients',
    );
  }

  async function renderJetStream() {
    const jsz = await get('/jsz?accounts=true&streams=true&consumers=true');
    document.getElementById('jetstream').hidden = false;
    document
      .getElementById('jetstream-server')
      .replaceChildren(
        card('Streams', num(jsz.streams), 'js_streams'),
        card('Consumers', num(jsz.consumers), 'js_consumers'),
        card('Messages', num(jsz.messages), 'js_messages'),
        card('Bytes', bytes(jsz.bytes), 'js_bytes'),
        card('Memory', bytes(jsz.memory), 'js_memory'),
        card('File', bytes(jsz.storage), 'js_storage'),
      );
    const streams = (jsz.account_details || []).flatMap((a) =>
      (a.stream_detail || []).map((s) => ({ account: a.name, ...s })),
    );
    table(
      'streams',
      [
        { label: 'stream', value: (s) => s.name },
        { label: 'account', value: (s) => s.account },
        { label: 'msgs', value: (s) => num(s.state?.messages), num: true },
        { label: 'bytes', value: (s) => bytes(s.state?.bytes), num: true },
        { label: 'first seq', value: (s) => num(s.state?.first_seq), num: true },
        { label: 'last seq', value: (s) => num(s.state?.last_seq), num: true },
        { label: 'consumers', value: (s) => num(s.state?.consumer_count), num: true },
      ],
      streams,
      'no streams',
    );
    const consumers = streams.flatMap((s) =>
      (s.consumer_detail || []).map((c) => ({ stream: s.name, ...c })),
    );
    table(
      'consumers',
      [
        { label: 'stream', value: (c) => c.stream },
        { label: 'consumer', value: (c) => c.name },
        { label: 'delivered', value: (c) => num(c.delivered?.stream_seq), num: true },
        { label: 'ack floor', value: (c) => num(c.ack_floor?.stream_seq), num: true },
        { label: 'pending', value: (c) => num(c.num_pending), num: true },
        { label: 'ack pending', value: (c) => num(c.num_ack_pending), num: true },
        { label: 'redelivered', value: (c) => num(c.num_redelivered), num: true },
        { label: 'waiting', value: (c) => num(c.num_waiting), num: true },
      ],
      consumers,
      'no consumers',
    );
  }

  // ---- the refresh loop -----------------------------------------------------------

  let timer = 0;
  async function tick(schedule = true) {
    const status = document.getElementById('status');
    try {
      const [varz, connz, closed, subsz, routez] = await Promise.all([
        get('/varz'),
        get(`/connz?limit=50&sort=${state.sort}`),
        get('/connz?state=closed&limit=1024'),
        get('/subsz?subs=1&limit=4096'),
        has('/routez') ? get('/routez') : Promise.resolve(null),
      ]);
      renderServer(varz);
      renderRates(varz);
      renderConnections(connz);
      renderClosed(closed);
      renderSubjects(subsz);
      renderCluster(varz, routez);
      if (has('/streaming/serverz')) await renderStreaming();
      if (varz.jetstream && varz.jetstream.config && has('/jsz')) await renderJetStream();
      exposed.varz = varz;
      exposed.ticks++;
      status.textContent = `live, updated ${new Date(varz.now).toLocaleTimeString()}`;
      status.className = 'status live';
    } catch (err) {
      exposed.errors++;
      status.textContent = `unreachable: ${err.message}`;
      status.className = 'status down';
    }
    if (schedule) timer = setTimeout(tick, REFRESH_MS);
  }

  window.addEventListener('resize', () => {
    if (state.charts === null) return;
    for (const [id, c] of [
      ['chart-msgs', state.charts.msgs],
      ['chart-bytes', state.charts.bytes],
    ]) {
      c.setSize({ width: chartWidth(document.getElementById(id)), height: 180 });
    }
  });
  window.addEventListener('pagehide', () => clearTimeout(timer));
  void tick();
})();
