// Show the variable chosen in `select` in every figure of its section (figures.py passes the
// arguments): copy its columns into the working ones, which every glyph and tooltip reads,
// and set each figure's reference band, change points and axis label.
const name = select.value
for (const c of cases) {
  const d = c.source.data
  const n = d.x.length
  const column = (key) => d[key] ?? new Float32Array(n).fill(NaN)
  const data = {...d}
  data.y = column('v:' + name)
  data.code = d['s:' + name] ?? new Int8Array(n).fill(6)      // series.VERDICTS: not judged
  data.lo = column('l:' + name)
  data.hi = column('h:' + name)
  data.wl = column('v:' + name + '_low')
  data.wh = column('v:' + name + '_high')
  c.source.data = data
  if (c.reference !== null) {       // figures.py draws bands and change points where any
    const band = c.bands[name] ?? [NaN, NaN, NaN]
    c.reference.data = {x: c.reference.data.x, lo: [band[0], band[0]],
                        hi: [band[1], band[1]], ref: [band[2], band[2]]}
  }
  if (c.changes !== null) {
    const shown = c.points.filter((p) => p.variable === name)
    const changes = {}
    for (const key of ['x', 'before', 'after', 'percent', 'p', 'session']) {
      changes[key] = shown.map((p) => p[key])
    }
    c.changes.data = changes
  }
  c.axis.axis_label = labels[name]
}
side_axis.axis_label = labels[name]
