#include "ps/variable_spec.h"

#include "base/status.h"

namespace dist::ps {

uint64_t VariableSpec::row_elements() const {
  uint64_t n = 1;
  for (size_t d = 1; d < shape.size(); ++d) n *= static_cast<uint64_t>(shape[d]);
  return n;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t d = 0; d < shape.size(); ++d) text += (d ? "," : "") + std::to_string(shape[d]);
  return text + "]";
}

void validate(const VariableSpec& spec) {
  if (spec.name.empty()) fail_invalid("variable: the name is empty");
  if (spec.name.size() > kMaxNameBytes) {
    fail_invalid("variable: the name is " + std::to_string(spec.name.size()) + " bytes, more than " +
                 std::to_string(kMaxNameBytes));
  }
  const std::string what = "variable " + quoted(spec.name);
  dtype_from_int(static_cast<int32_t>(spec.dtype));
  if (spec.shape.size() > kMaxRank) {
    fail_invalid(what + ": rank " + std::to_string(spec.shape.size()) + " is more than " + std::to_string(kMaxRank));
  }
  // Products are checked against the byte limit as they grow, so nothing overflows.
  const uint64_t limit = kMaxShardBytes / size_of(spec.dtype);
  uint64_t elements = 1;
  for (size_t d = 0; d < spec.shape.size(); ++d) {
    int64_t dim = spec.shape[d];
    if (dim < 0) fail_invalid(what + ": dimension " + std::to_string(d) + " is negative (" + std::to_string(dim) + ")");
    if (d == 0) continue;
    if (dim != 0 && elements > limit / static_cast<uint64_t>(dim)) {
      fail_invalid(what + ": shape " + shape_text(spec.shape) + " is too large");
    }
    elements *= static_cast<uint64_t>(dim);
  }
  const uint64_t total = spec.total_rows();
  if (spec.row_offset > total || spec.rows > total - spec.row_offset) {
    fail_invalid(what + ": rows " + std::to_string(spec.row_offset) + "+" + std::to_string(spec.rows) +
                 " are outside its " + std::to_string(total) + " rows");
  }
  if (elements != 0 && spec.rows > limit / elements) {
    fail_invalid(what + ": a shard of " + std::to_string(spec.rows) + " rows is larger than the " +
                 std::to_string(kMaxShardBytes >> 30) + " GiB limit");
  }
  if (!spec.optimizer) return;
  check_optimizer_config(*spec.optimizer);
  if (!optimizer_updates(spec.dtype)) {
    fail(Status::kUnsupported, what + ": optimizer " + optimizer_label(spec) + " needs an f32 or f64 variable, not " +
                                   name(spec.dtype));
  }
}

const char* optimizer_label(const VariableSpec& spec) {
  return spec.optimizer ? optimizer_name(spec.optimizer->kind) : "none";
}

bool same_slice(const VariableSpec& a, const VariableSpec& b) {
  return a.name == b.name && a.dtype == b.dtype && a.shape == b.shape && a.row_offset == b.row_offset &&
         a.rows == b.rows;
}

std::string describe(const VariableSpec& spec) {
  return spec.name + "[rows " + std::to_string(spec.row_offset) + ".." +
         std::to_string(spec.row_offset + spec.rows) + " of " + std::to_string(spec.total_rows()) + "] " +
         name(spec.dtype) + " " + shape_text(spec.shape);
}

}  // namespace dist::ps
