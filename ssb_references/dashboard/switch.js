// Show the variable chosen in `select` in every figure of its section (figures.py passes the
// arguments): copy its columns into the working ones, which every glyph and tooltip reads,
// and set each figure's reference band, change points and axis label.
const name = select.value
for (const c of cases) {
  const d = c.source.data
  const n = d.x.length
  const column = (key) => d[key] ?? new Float64Array(n).fill(NaN)
  const codes = d['s:' + name] ?? new Int8Array(n)
  const data = {...d}
  data.y = column('v:' + name)
  data.lo = column('l:' + name)
  data.hi = column('h:' + name)
  data.wl = column('v:' + name + '_low')
  data.wh = column('v:' + name + '_high')
  data.verdict = Array.from(codes, (code) => verdicts[code])
  data.colour = Array.from(codes, (code) => colours[code])
  c.source.data = data
  const band = c.bands[name] ?? [NaN, NaN, NaN]
  const x = c.reference.data.x
  c.reference.data = {x: x, lo: [band[0], band[0]], hi: [band[1], band[1]],
                      ref: [band[2], band[2]]}
  const shown = c.points.filter((p) => p.variable === name)
  const changes = {}
  for (const key of ['x', 'before', 'after', 'size', 'p', 'session']) {
    changes[key] = shown.map((p) => p[key])
  }
  c.changes.data = changes
  c.axis.axis_label = labels[name]
}
side_axis.axis_label = labels[name]
