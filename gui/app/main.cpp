// runplane: the Qt 6 desktop GUI (Design, Cluster, Runs, Compare) and the headless report.
#include "gui/app/application.h"

int main(int argc, char** argv) {
    return runplane::gui::runApplication(argc, argv);
}
