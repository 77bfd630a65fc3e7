#include "backend/cli/usage_errors.h"

#include <algorithm>

namespace runplane::cli {
namespace {

std::size_t editDistance(const std::string& a, const std::string& b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) {
        row[j] = j;
    }
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
            diagonal = up;
        }
    }
    return row[b.size()];
}

// The deepest subcommand the parser had entered when it stopped.
CLI::App* deepestParsed(CLI::App& app) {
    CLI::App* at = &app;
    for (bool descended = true; descended;) {
        descended = false;
        for (CLI::App* sub : at->get_subcommands()) {
            at = sub;
            descended = true;
            break;
        }
    }
    return at;
}

// Every subcommand name and long flag the user could have meant at that level.
std::vector<std::string> namesAt(CLI::App* at) {
    std::vector<std::string> names;
    for (const CLI::App* sub : at->get_subcommands([](const CLI::App*) { return true; })) {
        names.push_back(sub->get_name());
    }
    for (const CLI::Option* opt : at->get_options()) {
        for (const std::string& flag : opt->get_lnames()) {
            names.push_back("--" + flag);
        }
    }
    return names;
}

}  // namespace

std::string closestName(const std::string& word, const std::vector<std::string>& candidates) {
    std::string best;
    std::size_t bestDistance = 3;
    for (const std::string& c : candidates) {
        std::size_t d = editDistance(word, c);
        if (word.size() >= 3 && c.rfind(word, 0) == 0) {
            d = std::min<std::size_t>(d, 1);  // a prefix of a longer name
        }
        if (d < bestDistance) {
            bestDistance = d;
            best = c;
        }
    }
    return best;
}

int reportParseError(CLI::App& app, const CLI::ParseError& error, std::ostream& out,
                     std::ostream& err) {
    if (error.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
        return app.exit(error, out, err);  // --help, --version
    }
    CLI::App* at = deepestParsed(app);
    err << at->get_name() << ": " << error.what() << "\n";
    // The first word the parser did not take is the likeliest typo.
    const std::vector<std::string> names = namesAt(at);
    for (const std::string& extra : at->remaining()) {
        const std::string guess = closestName(extra.substr(0, extra.find('=')), names);
        if (!guess.empty()) {
            err << "did you mean '" << guess << "'?\n";
            break;
        }
    }
    err << "Run '"
        << (at == &app ? std::string("runplanectl") : "runplanectl ... " + at->get_name())
        << " --help' for usage.\n";
    return 2;
}

}  // namespace runplane::cli
