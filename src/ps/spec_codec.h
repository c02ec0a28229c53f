// The binary form of a VariableSpec, shared by the create request and the
// checkpoint shard files.
#pragma once

#include "ps/byte_codec.h"
#include "ps/variable_spec.h"

namespace dist::ps {

void encode_spec(const VariableSpec& spec, ByteWriter& out);
// Decodes and validates; throws invalid-argument naming the bad field.
VariableSpec decode_spec(ByteReader& in);

}  // namespace dist::ps
