#include "yaml-cpp/parse.h"

int main() { return YAML::Parse("a: 1") ? 0 : 1; }
