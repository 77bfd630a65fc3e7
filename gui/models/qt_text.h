#pragma once
// The one conversion of the core's UTF-8 text and ids into Qt's strings, for the GUI's models and
// pages (the core is Qt-free; ids are shown as their text).

#include <QString>

#include <string>

#include "common/ids.h"

namespace runplane::gui {

inline QString qs(const std::string& s) {
    return QString::fromStdString(s);
}
inline QString qs(const RunId& id) {
    return QString::fromStdString(id.value());
}
inline QString qs(const NodeId& id) {
    return QString::fromStdString(id.value());
}

}  // namespace runplane::gui
