#pragma once
#include <string>

namespace YAML {
bool Parse(const std::string& input);
}
