# The summary of a bench/compare --hosts CSV: per all-reduce size each
# implementation's best variant (median us), ours/mpi and ours/gloo, and ours
# against the link bound: across H hosts every host must receive 2(H-1)/H of
# the message over its link, at the rate ucx_perftest's tag_bw measures there.
# Variables: hosts, per_host, layout.
BEGIN { FS = "," }
$1 == "impl" { next }
$1 == "ucx_perftest" {
  split($2, name, "@")
  refs[++nrefs] = sprintf("%-22s %8s %10.2f us  %7.3f GB/s", name[1], human($4), $6, $8)
  if (name[1] ~ /^tag_lat/ && (lat == "" || $6 + 0 < lat + 0)) lat = $6
  if (name[1] ~ /^tag_bw/ && (bw == "" || $8 + 0 > bw + 0)) bw = $8
  next
}
$1 == "ucx_exchange" {
  if (!($4 in exchange) || $6 + 0 < exchange[$4] + 0) exchange[$4] = $6
  if (!($4 in seen_size)) { seen_size[$4] = 1; sizes[++nsizes] = $4 }
  next
}
{
  split($2, name, "@")
  slash = index(name[1], "/")
  if (substr(name[1], 1, slash - 1) != "allreduce") next
  who = $1 == "distribute" ? "ours" : $1
  if (!($4 in seen_size)) { seen_size[$4] = 1; sizes[++nsizes] = $4 }
  if (who == "ours") {
    v = substr(name[1], slash + 1)
    if (!(v in seen_variant)) { seen_variant[v] = 1; variants[++nvariants] = v }
    ours[v, $4] = $6
  }
  k = who SUBSEP $4
  if (!(k in med) || $6 + 0 < med[k] + 0) { med[k] = $6; var[k] = substr(name[1], slash + 1) }
}
function human(b) {
  return b >= 1048576 ? sprintf("%d MiB", b / 1048576) : b >= 1024 ? sprintf("%d KiB", b / 1024) : sprintf("%d B", b)
}
function cell(k) {
  return (k in med) ? sprintf("%-22s %10.1f", substr(var[k], 1, 22), med[k]) : sprintf("%-22s %10s", "-", "")
}
function ratio(a, b) { return (a in med) && (b in med) ? sprintf("%7.2f", med[a] / med[b]) : sprintf("%7s", "-") }
END {
  # sort the sizes (a handful: insertion sort)
  for (i = 2; i <= nsizes; i++)
    for (j = i; j > 1 && sizes[j] + 0 < sizes[j - 1] + 0; j--) { t = sizes[j]; sizes[j] = sizes[j - 1]; sizes[j - 1] = t }
  share = 2 * (hosts - 1) / hosts
  printf "\nall-reduce, float32 sum, %d hosts x %d ranks (%s): best variant per size, median us\n", hosts, per_host, layout
  printf "%8s | %-33s | %-33s | %-33s | %7s %7s | %10s %7s\n", "size", "ours (distribute)", "openmpi", "gloo",
         "our/mpi", "our/glo", "link bound", "our/bnd"
  for (i = 1; i <= nsizes; i++) {
    b = sizes[i]
    o = "ours" SUBSEP b
    # Below 256 KiB the time is latency, not the link's rate: no bound shown.
    bound = bw != "" && b >= 262144 ? share * b / (bw * 1e3) : ""
    printf "%8s | %s | %s | %s | %s %s | %10s %7s\n", human(b), cell(o), cell("openmpi" SUBSEP b), cell("gloo" SUBSEP b),
           ratio(o, "openmpi" SUBSEP b), ratio(o, "gloo" SUBSEP b),
           bound != "" ? sprintf("%10.1f", bound) : "-", bound != "" && (o in med) ? sprintf("%7.2f", med[o] / bound) : "-"
  }
  print "ratios are median-time ratios: below 1 means ours is faster; the link bound is 2(H-1)/H x size at tag_bw's rate"
  if (nvariants) {
    printf "\nours by variant (median us; auto = the defaults)\n%8s", "size"
    for (v = 1; v <= nvariants; v++) printf " %12s", variants[v]
    printf "\n"
    for (i = 1; i <= nsizes; i++) {
      printf "%8s", human(sizes[i])
      for (v = 1; v <= nvariants; v++)
        printf " %12s", ((variants[v], sizes[i]) in ours) ? sprintf("%.1f", ours[variants[v], sizes[i]]) : "-"
      printf "\n"
    }
  }
  if (lat != "" && ("ours" SUBSEP 8) in med)
    printf "8 B all-reduce: ours %.1f us against UCX's round trip between the hosts (2 x tag_lat %.2f us): %.2fx\n",
           med["ours" SUBSEP 8], lat, med["ours" SUBSEP 8] / (2 * lat)
  for (i = 1; i <= nsizes; i++) {
    b = sizes[i]
    if (!(b in exchange)) continue
    if (!shown++) printf "\nboth ways at once (ucx_exchange over the link: what a 2-rank all-reduce must move), median us\n%8s %12s %9s %12s %9s %10s\n", "size", "exchange", "GB/s", "ours", "GB/s", "ours/exch"
    o = "ours" SUBSEP b
    printf "%8s %12.1f %9.3f %12s %9s %10s\n", human(b), exchange[b], b / exchange[b] / 1e3,
           (o in med) ? sprintf("%.1f", med[o]) : "-", (o in med) ? sprintf("%.3f", b / med[o] / 1e3) : "-",
           (o in med) ? sprintf("%.2f", med[o] / exchange[b]) : "-"
  }
  if (nrefs) print "\nthe link (ucx_perftest host 1 -> host 0; tag_lat one way, tag_bw per message):"
  for (i = 1; i <= nrefs; i++) print "  " refs[i]
}
