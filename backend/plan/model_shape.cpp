#include "backend/plan/model_shape.h"

namespace runplane::plan {

bool ModelShape::isFullAttentionLayer(int n) const {
    if (linear.kind == LinearAttentionKind::None || linear.fullAttentionInterval <= 0) {
        return true;
    }
    if (n % linear.fullAttentionInterval == 0) {
        return true;
    }
    for (int extra : linear.extraFullAttentionLayers) {
        if (extra == n) {
            return true;
        }
    }
    return false;
}

int ModelShape::numFullAttentionLayers() const {
    if (linear.kind == LinearAttentionKind::None || linear.fullAttentionInterval <= 0) {
        return numLayers;
    }
    int count = numLayers / linear.fullAttentionInterval;
    for (int extra : linear.extraFullAttentionLayers) {
        if (extra >= 1 && extra <= numLayers && extra % linear.fullAttentionInterval != 0) {
            ++count;
        }
    }
    return count;
}

const ModelVariant* ModelShape::findVariant(const std::string& variantName) const {
    for (const auto& v : variants) {
        if (v.name == variantName) {
            return &v;
        }
    }
    return nullptr;
}

ModelShape ModelShape::withVariant(const std::string& variantName) const {
    ModelShape out = *this;
    const ModelVariant* v = findVariant(variantName.empty() ? defaultVariant : variantName);
    if (v == nullptr) {
        return out;
    }
    if (v->numLayers > 0) {
        out.numLayers = v->numLayers;
        // A shortened variant keeps the dense prefix but never more dense layers than it has.
        out.firstKDense = std::min(out.firstKDense, out.numLayers);
    }
    if (v->mtpNumLayers >= 0) {
        out.mtpNumLayers = v->mtpNumLayers;
    }
    return out;
}

const char* toString(AttentionKind value) {
    return value == AttentionKind::Mla ? "mla" : "gqa";
}

const char* toString(LinearAttentionKind value) {
    switch (value) {
        case LinearAttentionKind::Gdn:
            return "gdn";
        case LinearAttentionKind::Kda:
            return "kda";
        case LinearAttentionKind::None:
            break;
    }
    return "none";
}

}  // namespace runplane::plan
