#pragma once
// What the Design page says about a design that cannot run (issue 46, docs/gui.md "An invalid
// design"), and two small file-name rules of its Save as / Import. GUI thread only.

#include <QString>

#include <functional>
#include <string>
#include <vector>

#include "backend/plan/rules.h"

class QWidget;

namespace runplane::gui {

/// "" when no finding is an error; else "Invalid design: 2 errors — trainer.ep: <message> (and 1
/// more). <consequence>", the consequence naming what the view shows ("these numbers are for a
/// layout that cannot exist", "this launch cannot run as written").
QString invalidDesignText(const std::vector<plan::Finding>& findings, const QString& consequence);

/// Asks whether to copy the launch of an invalid design (default: No). True = copy.
using CopyInvalidPrompt = std::function<bool(const QString& reason)>;
bool askCopyInvalidLaunch(QWidget* parent, const QString& reason);

/// The path a recipe is saved to: `.yaml` appended when the name has no suffix, so that Open (which
/// lists *.yaml and *.yml) finds it again.
QString withRecipeSuffix(const QString& path);

/// The name an imported recipe gets when the script carried none: the script's file name without
/// its last suffix ("run-qwen3-4B.sh" -> "run-qwen3-4B").
std::string recipeNameFromScript(const QString& scriptPath);

}  // namespace runplane::gui
