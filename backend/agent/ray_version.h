#pragma once
// Which Ray a node would run, without running it (issue 47). `ray --version` costs 0.5-0.6 s of a
// Python start per call; preflight of 64 nodes must answer in well under that. The version is the
// installed package's metadata: the `ray` script on PATH names its interpreter (#!), and the
// interpreter's environment holds `ray-X.Y.Z.dist-info/METADATA` ("Version: X.Y.Z"). Answers are
// cached per script and invalidated when the script or the dist-info directory changes; where no
// metadata is found, `ray --version` is run once (and cached the same way).

#include <string>
#include <utility>

namespace runplane::agent {

struct RayVersionAnswer {
    bool ok = false;
    /// "EXE: ray, version X.Y.Z" (the words `ray --version` prints, so readers of the check's
    /// message see one format), or why not ("ray not found on PATH=...").
    std::string message;
    /// Where the version was read: "metadata DIR" or "ray --version".
    std::string source;
};

/// The `ray` executable that PATH (colon list) finds, or "".
std::string findRayOnPath(const std::string& path);

/// The site directories the script's interpreter would import from: its venv or prefix
/// (`lib/python3.*/{site,dist}-packages`) and the script's own prefix (`bin/../lib/...`, a
/// `pip install --user`).
std::string rayMetadataVersion(const std::string& rayExecutable, std::string* distInfoDir);

/// The version answer for PATH, from metadata when it exists, else from `ray --version`; cached.
RayVersionAnswer rayVersionOnPath(const std::string& path);

}  // namespace runplane::agent
