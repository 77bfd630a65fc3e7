#pragma once
// The one unit policy of every Runplane surface (CLI tables, GUI labels, plan text, reports):
// decimal bytes (GB = 10^9, as the seed, the recipes' host_ram_gb and vendors' RAM figures are
// written) and one duration style. Plain C++, no Qt, no gRPC.

#include <string>

namespace runplane::units {

inline constexpr double kBytesPerGB = 1e9;

/// Bytes in decimal units: GB from 1 GB up with two decimals below 100 GB and one above
/// ("12.50 GB", "956.0 GB"; no TB: RAM is written in GB everywhere), else whole MB, kB or B
/// ("320 MB"). NaN -> "nan".
std::string formatBytes(double bytes);

/// A count of parameters (or tokens) with a decimal suffix, as model names write them: B from
/// 10^9 with one decimal from 100 B and two below ("2419.8 B", "30.53 B"), then M and K with one
/// decimal ("792.7 K"), else whole. NaN -> "nan".
std::string formatCount(double count);

/// Seconds -> "3h 05m", "4m 09s", "12s" (rounded to the second); negative or NaN -> "-".
std::string formatDuration(double seconds);

}  // namespace runplane::units
