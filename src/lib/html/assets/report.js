/* rtrace report: tabs, the trace selector, the flame graph (icicle),
 * memory over time with a brushed range, the size histogram, sortable
 * and filterable tables. Reads the aggregates embedded in #rt-data:
 * per trace, frame names (fr, fl), the stacks as a trie (tn: parent,
 * frame per node), per site its innermost node (ts) and costs (sc:
 * allocations, temporary, bytes, peak, leaked),
 * the buckets over time (b) and per (site, bucket) cells (cells: site,
 * bucket, then the five costs, flat). No library, no network. */
(function () {
	'use strict';
	var errs = document.getElementById('js-errors');
	function note(m) { if (errs) errs.textContent += m + '\n'; }
	window.addEventListener('error', function (e) { note('error: ' + e.message + ' (line ' + e.lineno + ')'); });
	document.documentElement.className += ' js';
	function $(id) { return document.getElementById(id); }
	function all(sel, root) { return Array.prototype.slice.call((root || document).querySelectorAll(sel)); }
	var D = JSON.parse($('rt-data').textContent);
	var COSTS = ['allocations', 'temporary', 'bytes', 'peak', 'leaked'];
	var cur = 0, range = null, focus = [], drawn = {};
	var NS = 'http://www.w3.org/2000/svg';

	function fmtBytes(v) {
		var u = ['B', 'KB', 'MB', 'GB', 'TB'], i = 0;
		while (v >= 1024 && i < u.length - 1) { v /= 1024; i++; }
		return (i ? v.toFixed(v < 10 ? 2 : 1) : String(v)) + ' ' + u[i];
	}
	function fmtNum(v) { return String(v).replace(/\B(?=(\d{3})+(?!\d))/g, ','); }
	function fmtCost(k, v) { return k === 2 || k === 3 || k === 4 ? fmtBytes(v) : fmtNum(v); }
	function fmtAxis(t, x) {
		if (!t.timed) return fmtNum(x) + ' ev';
		return x >= 1e6 ? (x / 1e6).toFixed(2) + ' s' : (x / 1e3).toFixed(1) + ' ms';
	}
	function el(name, attrs, parent) {
		var e = document.createElementNS(NS, name);
		for (var k in attrs) e.setAttribute(k, attrs[k]);
		if (parent) parent.appendChild(e);
		return e;
	}
	function clear(node) { while (node && node.firstChild) node.removeChild(node.firstChild); }
	var tip = document.createElement('div');
	tip.className = 'tip';
	document.body.appendChild(tip);
	function showTip(e, text) {
		tip.textContent = text;
		tip.style.display = 'block';
		tip.style.left = Math.min(e.clientX + 12, window.innerWidth - 300) + 'px';
		tip.style.top = (e.clientY + 14) + 'px';
	}
	function hideTip() { tip.style.display = 'none'; }

	/* --- costs of the selected trace, over the range or the whole run --- */
	function siteCosts(t) {
		if (!range || !t.cells) return t.sc;
		var out = t.sc.map(function () { return [0, 0, 0, 0, 0]; }), c = t.cells;
		for (var i = 0; i + 6 < c.length; i += 7) {
			if (c[i + 1] < range[0] || c[i + 1] > range[1]) continue;
			var o = out[c[i]];
			for (var k = 0; k < 5; k++) o[k] += c[i + 2 + k];
		}
		return out;
	}

	/* --- flame graph (icicle: the outermost frame on top) --- */
	/* The trie's nodes weighted by the sites' costs: node j (from 1) has
	 * parent tn[2j-2] (0: the root) and frame tn[2j-1]; parents come
	 * before their children, so one pass from the end sums them up. */
	function buildTree(t, k) {
		var costs = siteCosts(t), tn = t.tn, n = tn.length / 2, w = new Float64Array(n + 1), j;
		for (var i = 0; i < t.ts.length; i++) if (costs[i]) w[t.ts[i]] += costs[i][k];
		for (j = n; j >= 1; j--) w[tn[2 * j - 2]] += w[j];
		var nodes = [{f: -1, v: w[0], kids: {}}];
		for (j = 1; j <= n; j++) {
			var p = nodes[tn[2 * j - 2]];
			if (!w[j] || !p) continue;
			nodes[j] = p.kids[tn[2 * j - 1]] = {f: tn[2 * j - 1], v: w[j], kids: {}, up: p};
		}
		return nodes[0];
	}
	function color(name) {
		var h = 0;
		for (var i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
		return 'hsl(' + (10 + h % 45) + ',' + (70 + h % 20) + '%,' + (55 + (h >> 8) % 15) + '%)';
	}
	function drawFlame() {
		var t = D.traces[cur], svg = $('fg');
		if (!svg || !t.tn) return;
		var k = COSTS.indexOf($('fg-cost').value), root = buildTree(t, k);
		var q = ($('fg-search').value || '').toLowerCase(), matched = 0;
		var node = root;
		for (var i = 0; i < focus.length && node.kids[focus[i]]; i++) node = node.kids[focus[i]];
		var chain = [];
		for (var n = node; n; n = n.up) chain.unshift(n);
		clear(svg);
		var W = svg.clientWidth || 1000, H = 17, rows = chain.length, depth = 0;
		function name(f) { return f < 0 ? 'all (' + fmtCost(k, root.v) + ')' : t.fr[f]; }
		function rect(n, x, w, d, isChain) {
			var nm = name(n.f), r = el('rect', {x: x, y: d * H, width: Math.max(w, 0.5), height: H - 1,
							    fill: n.f < 0 ? '#b8c2d0' : color(nm)}, svg);
			var hit = q && n.f >= 0 && nm.toLowerCase().indexOf(q) >= 0;
			if (hit) r.setAttribute('class', 'hit');
			r.addEventListener('click', function () { focus = pathOf(n); drawFlame(); });
			r.addEventListener('mousemove', function (e) {
				showTip(e, nm + (n.f >= 0 && t.fl[n.f] ? '  ' + t.fl[n.f] : '') + '\n' + fmtCost(k, n.v) +
					' (' + (root.v ? (100 * n.v / root.v).toFixed(2) : '0') + '%)');
			});
			r.addEventListener('mouseout', hideTip);
			if (w > 28) {
				var tx = el('text', {x: x + 3, y: d * H + 12}, svg), fit = Math.floor((w - 6) / 6.5);
				tx.textContent = nm.length > fit ? nm.slice(0, Math.max(fit - 1, 1)) + '\u2026' : nm;
			}
			return hit;
		}
		for (i = 0; i < chain.length - 1; i++) rect(chain[i], 0, W, i, true);
		function walk(n, x, w, d) {
			if (w < 0.3) return;
			depth = Math.max(depth, d);
			var hit = rect(n, x, w, d);
			if (hit) { matched += n.v; return; }
			var kids = Object.keys(n.kids).map(function (f) { return n.kids[f]; });
			kids.sort(function (a, b) { return b.v - a.v; });
			for (var j = 0; j < kids.length; j++) {
				var kw = n.v ? w * kids[j].v / n.v : 0;
				walk(kids[j], x, kw, d + 1);
				x += kw;
			}
		}
		walk(node, 0, W, rows - 1);
		svg.setAttribute('height', (depth + 1) * H);
		svg.setAttribute('viewBox', '0 0 ' + W + ' ' + (depth + 1) * H);
		$('fg-match').textContent = q ? 'matched ' + fmtCost(k, matched) + ' (' +
			(root.v ? (100 * matched / root.v).toFixed(2) : '0') + '%)' : '';
		if (!root.v) {
			var tx = el('text', {x: 8, y: 14}, svg);
			tx.textContent = 'no ' + COSTS[k] + (range ? ' in the selected range' : '');
		}
	}
	function pathOf(n) {
		var p = [];
		for (; n && n.f >= 0; n = n.up) p.unshift(n.f);
		return p;
	}

	/* --- memory over time, brushable --- */
	function drawTime() {
		var t = D.traces[cur], svg = $('tm');
		if (!svg) return;
		clear(svg);
		var b = t.b;
		if (!b || !b.live.length) {
			el('text', {x: 8, y: 16}, svg).textContent = 'no data over time in this input';
			return;
		}
		var W = svg.clientWidth || 1000, H = 240, L = 70, R = 80, T = 10, B = 28, n = b.live.length;
		var maxB = Math.max.apply(null, b.max.concat([1])), maxN = Math.max.apply(null, b.blocks.concat([1]));
		var maxA = Math.max.apply(null, b.allocs.concat([1]));
		function X(i) { return L + (W - L - R) * i / n; }
		function Y(v, m) { return T + (H - T - B) * (1 - v / m); }
		svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H);
		svg.setAttribute('height', H);
		for (var i = 0; i < n; i++) /* allocations per bucket */
			el('rect', {x: X(i), y: Y(b.allocs[i], maxA) , width: Math.max(X(1) - X(0) - 1, 1),
				    height: H - B - Y(b.allocs[i], maxA), fill: '#e9ecef'}, svg);
		var env = 'M' + X(0) + ',' + Y(0, maxB), live = '', blk = '';
		for (i = 0; i < n; i++) {
			env += 'L' + X(i) + ',' + Y(b.max[i], maxB) + 'L' + X(i + 1) + ',' + Y(b.max[i], maxB);
			live += (i ? 'L' : 'M') + X(i + 1) + ',' + Y(b.live[i], maxB);
			blk += (i ? 'L' : 'M') + X(i + 1) + ',' + Y(b.blocks[i], maxN);
		}
		env += 'L' + X(n) + ',' + Y(0, maxB) + 'Z';
		el('path', {d: env, fill: '#ffd8a8', stroke: 'none'}, svg);
		el('path', {d: live, fill: 'none', stroke: '#d9480f', 'stroke-width': 1.5}, svg);
		el('path', {d: blk, fill: 'none', stroke: '#1c7ed6', 'stroke-dasharray': '3,2'}, svg);
		function label(x, y, s, anchor) {
			el('text', {x: x, y: y, 'text-anchor': anchor || 'start'}, svg).textContent = s;
		}
		label(L - 4, T + 10, fmtBytes(maxB), 'end');
		label(L - 4, H - B, '0', 'end');
		label(W - R + 4, T + 10, fmtNum(maxN) + ' blocks');
		label(L, H - 8, fmtAxis(t, 0));
		label(W - R, H - 8, fmtAxis(t, b.w * n), 'end');
		label((W - R + L) / 2, H - 8, 'live bytes (the most in each interval shaded), blocks dashed, allocations grey', 'middle');
		var sel = el('rect', {x: 0, y: T, width: 0, height: H - T - B, fill: 'rgba(28,126,214,.18)',
				      stroke: '#1c7ed6'}, svg);
		if (range) { sel.setAttribute('x', X(range[0])); sel.setAttribute('width', X(range[1] + 1) - X(range[0])); }
		var start = null;
		function bucketAt(e) {
			var r = svg.getBoundingClientRect(), x = (e.clientX - r.left) * W / r.width;
			return Math.max(0, Math.min(n - 1, Math.floor((x - L) * n / (W - L - R))));
		}
		svg.onmousedown = function (e) { start = bucketAt(e); e.preventDefault(); };
		svg.onmousemove = function (e) {
			var i = bucketAt(e);
			showTip(e, fmtAxis(t, b.w * i) + ' \u2013 ' + fmtAxis(t, b.w * (i + 1)) + ': ' + fmtBytes(b.live[i]) +
				' live in ' + fmtNum(b.blocks[i]) + ' blocks, ' + fmtNum(b.allocs[i]) + ' allocations, ' +
				fmtNum(b.frees[i]) + ' frees');
			if (start === null) return;
			var lo = Math.min(start, i), hi = Math.max(start, i);
			sel.setAttribute('x', X(lo));
			sel.setAttribute('width', X(hi + 1) - X(lo));
		};
		svg.onmouseleave = hideTip;
		svg.onmouseup = function (e) {
			if (start === null) return;
			var i = bucketAt(e);
			setRange([Math.min(start, i), Math.max(start, i)]);
			start = null;
		};
	}

	function setRange(r) {
		var t = D.traces[cur];
		range = r;
		$('tm-range').textContent = r ? 'allocations made in ' + fmtAxis(t, t.b.w * r[0]) + ' \u2013 ' +
			fmtAxis(t, t.b.w * (r[1] + 1)) : 'whole run';
		applyRange();
		drawn = {};
		redraw();
	}

	/* The call sites and leak tables to the allocations made in the range. */
	function applyRange() {
		var t = D.traces[cur], costs = siteCosts(t);
		all('tr[data-site]').forEach(function (tr) {
			if (+tr.closest('[data-trace]').getAttribute('data-trace') !== cur) return;
			var c = costs[+tr.getAttribute('data-site')] || [0, 0, 0, 0, 0], leak = tr.hasAttribute('data-leak');
			all('td[data-k]', tr).forEach(function (td) {
				var k = +td.getAttribute('data-k');
				td.setAttribute('data-v', c[k]);
				td.textContent = fmtCost(k, c[k]);
			});
			var any = leak ? c[4] > 0 : c[0] > 0 || c[4] > 0 || c[3] > 0;
			tr.classList.toggle('off', !!range && !any);
		});
	}

	/* --- size histogram --- */
	function drawHist() {
		var t = D.traces[cur], svg = $('hist');
		if (!svg) return;
		clear(svg);
		var s = t.sizes || [];
		if (!s.length) { el('text', {x: 8, y: 16}, svg).textContent = 'no allocations in this input'; return; }
		var W = svg.clientWidth || 1000, H = 200, B = 30, T = 14, n = s.length, bw = (W - 20) / n;
		var m = Math.max.apply(null, s.map(function (r) { return r[2]; }));
		svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H);
		svg.setAttribute('height', H);
		s.forEach(function (r, i) {
			var h = (H - B - T) * r[2] / m, x = 10 + i * bw;
			var rc = el('rect', {x: x + 1, y: H - B - h, width: Math.max(bw - 2, 1), height: h, fill: '#4dabf7'}, svg);
			rc.addEventListener('mousemove', function (e) {
				showTip(e, fmtNum(r[0]) + '\u2013' + fmtNum(r[1]) + ' bytes: ' + fmtNum(r[2]) + ' allocations, ' +
					fmtBytes(r[3]));
			});
			rc.addEventListener('mouseout', hideTip);
			if (bw > 26) el('text', {x: x + bw / 2, y: H - B + 12, 'text-anchor': 'middle'}, svg).textContent =
				r[0] >= 1024 ? fmtBytes(r[0]).replace(' ', '') : String(r[0]);
			if (r[2] && bw > 26) el('text', {x: x + bw / 2, y: H - B - h - 2, 'text-anchor': 'middle'}, svg)
				.textContent = fmtNum(r[2]);
		});
	}

	/* --- tables: sort on a header click, filter on typed text --- */
	function sortable(table) {
		all('th.sort', table).forEach(function (th, col) {
			th.addEventListener('click', function () {
				var idx = Array.prototype.indexOf.call(th.parentNode.children, th);
				var down = !th.classList.contains('down');
				all('th.sort', table).forEach(function (h) { h.classList.remove('up', 'down'); });
				th.classList.add(down ? 'down' : 'up');
				var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
				rows.sort(function (a, b) {
					var x = a.cells[idx], y = b.cells[idx];
					var vx = x.getAttribute('data-v'), vy = y.getAttribute('data-v'), r;
					if (vx !== null && vy !== null) r = +vx - +vy;
					else r = x.textContent.localeCompare(y.textContent);
					return down ? -r : r;
				});
				rows.forEach(function (r) { body.appendChild(r); });
			});
		});
	}
	all('table.data').forEach(sortable);
	all('input.filter').forEach(function (inp) {
		inp.addEventListener('input', function () {
			var q = inp.value.toLowerCase(), table = $(inp.getAttribute('data-for'));
			all('tbody tr', table).forEach(function (tr) {
				tr.classList.toggle('nf', !!q && tr.textContent.toLowerCase().indexOf(q) < 0);
			});
		});
	});

	/* --- tabs and traces --- */
	function redraw() {
		var on = (document.querySelector('section.tab.on') || {}).id;
		if (on === 'flame') drawFlame();
		if (on === 'time') drawTime();
		if (on === 'sizes') drawHist();
	}
	function show(id) {
		if (!$(id) || !$(id).classList.contains('tab')) id = 'summary';
		all('section.tab').forEach(function (s) { s.classList.toggle('on', s.id === id); });
		all('nav a').forEach(function (a) { a.classList.toggle('on', a.getAttribute('href') === '#' + id); });
		redraw();
	}
	all('nav a').forEach(function (a) {
		a.addEventListener('click', function (e) {
			e.preventDefault();
			show(a.getAttribute('href').slice(1));
			if (history.replaceState) history.replaceState(null, '', a.getAttribute('href'));
		});
	});
	function pickTrace(i) {
		cur = i;
		focus = [];
		all('[data-trace]').forEach(function (e) { e.classList.toggle('off', +e.getAttribute('data-trace') !== cur); });
		setRange(null);
	}
	if ($('trace')) $('trace').addEventListener('change', function () { pickTrace(+this.value); });
	if ($('fg-cost')) $('fg-cost').addEventListener('change', drawFlame);
	if ($('fg-search')) $('fg-search').addEventListener('input', drawFlame);
	if ($('fg-reset')) $('fg-reset').addEventListener('click', function () { focus = []; drawFlame(); });
	if ($('tm-clear')) $('tm-clear').addEventListener('click', function () { setRange(null); });
	window.addEventListener('resize', redraw);
	pickTrace(0);
	/* "#TAB", or "#TAB&range=FROM-TO" (buckets): a link to a view */
	var m = /range=(\d+)-(\d+)/.exec(location.hash);
	if (m) setRange([+m[1], +m[2]]);
	show(location.hash.slice(1).split('&')[0]);
	document.body.setAttribute('data-load-ms', Math.round(performance.now()));
	document.body.setAttribute('data-ready', '1');
})();
