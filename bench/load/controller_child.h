#pragma once
// The controller under load (bench_load --child gui|lib), run as a child process so that its RSS
// is its own. Prints one JSON object per line on stdout (a "gui" line per second in gui mode);
// ends on SIGTERM.

#include <string>

namespace runplane::bench {

struct ChildOptions {
    std::string mode;  // "gui": ClusterPage + RunsPage offscreen (the GUI's controller); "lib":
                       // control::Controller only
    std::string profile;
    std::string historyPath;
    std::string runId;
    bool inlineCheckpoints = false;  // lib: the writer checkpoints in its commits (A/B)
    bool unsyncedCommits = false;    // lib: synchronous=NORMAL commits (A/B of durable ones)
    int backgroundNice = 0;          // gui: threads::setBackgroundNice, as the GUI sets it
    int guiSliceUs = 0;              // gui: threads::setOwnSlice on the GUI thread (0: default)
    bool paintApart = false;         // gui: the Runs page painted in its own event-loop turn
    bool paintIntoOneImage = false;  // gui: each page painted into one image, not a new one
    bool platformStyle = false;      // gui: the platform's style without FlatStyle (A/B)
    bool styledDelegates = false;    // gui: QStyledItemDelegate in the tables (A/B)
    std::string savePagesDir;        // gui: both pages saved as PNGs here at the end
};

int runControllerChild(const ChildOptions& options, int argc, char** argv);

}  // namespace runplane::bench
