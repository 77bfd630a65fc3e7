#pragma once
// Shared helpers of the launch-script tests: where things are, temporary folders, running a
// script under bash with fake `ray` / `python` / `python3` on PATH that record their argv.

#include <string>
#include <utility>
#include <vector>

#include "backend/plan/catalog.h"
#include "backend/plan/recipe.h"

namespace runplane::plan::launch::test {

std::string sourceDir();
std::string dataDir();  // tests/launch/data
std::string recipesDir();
const ModelCatalog& catalog();
/// Every shipped recipe (recipes/**/*.yaml outside models/), sorted.
std::vector<std::string> shippedRecipeFiles();

std::string readFile(const std::string& path);
void writeFile(const std::string& path, const std::string& content, bool executable = false);

/// A fresh folder under the system temp dir, removed on destruction.
class TempDir {
  public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return m_path; }
    std::string file(const std::string& name) const { return m_path + "/" + name; }

  private:
    std::string m_path;
};

struct RunResult {
    int exitCode = -1;
    std::string output;  // stdout and stderr together
};

/// Runs argv (no shell) with extra environment entries, cwd = dir; captures output.
RunResult runProcess(const std::vector<std::string>& argv,
                     const std::vector<std::pair<std::string, std::string>>& env,
                     const std::string& dir);

/// One recorded call of a fake tool.
struct Call {
    std::string tool;  // "ray", "python", "python3"
    std::vector<std::string> argv;
};

/// Fake ray / python / python3 / ssh / nvidia-smi / curl / pkill / docker in `<root>/bin` (python
/// prints
/// `<root>/model_args/NAME.txt` for miles' `model_args_utils.py NAME`), recording each call in
/// order under
/// `<root>/calls`. `ray start` remembers its --num-gpus, `ray status` prints the sum in Ray's
/// "0.0/N.0 GPU" form, `ray job submit ... -- CMD` runs CMD (and keeps --runtime-env-json).
class FakeTools {
  public:
    explicit FakeTools(const std::string& root);
    /// PATH (fake bin first) and the log location, to pass to runProcess.
    std::vector<std::pair<std::string, std::string>> env() const;
    std::vector<Call> calls() const;
    std::string runtimeEnvJson() const;  // "" when no job was submitted

  private:
    std::string m_root;
};

}  // namespace runplane::plan::launch::test
