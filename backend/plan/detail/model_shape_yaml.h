#pragma once
// Internal: ModelShape <-> YAML, shared by catalog files and inline recipe shapes.

#include "backend/plan/detail/yaml_support.h"
#include "backend/plan/model_shape.h"

namespace runplane::plan::detail {

/// Reads the shape's keys from r (the caller calls r.finish()).
void readModelShape(MapReader& r, ModelShape& shape);
/// Writes the shape's non-default fields into w.
void writeModelShape(SectionWriter& w, const ModelShape& shape);

}  // namespace runplane::plan::detail
