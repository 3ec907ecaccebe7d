// The shared libraries newscls loads when they are first needed (a family's plugin, bert's
// training library): found where the build put them or, for a tool copied elsewhere with its
// libraries, beside the running executable; opened once and never closed, since what they
// define lives until the process ends.
//
//   auto entry = reinterpret_cast<Entry>(library_symbol(library_beside_tool(BUILT_AT), "model family 'bert'",
//   "newscls_family"));
#pragma once

#include <string>

namespace newscls {

// built_at when it exists, else the file of that name beside the executable when that exists,
// else built_at (so that the error names where the build put it).
std::string library_beside_tool(const std::string& built_at);

// The address of `symbol` in the library at path, loaded now if it is not yet (RTLD_NOW |
// RTLD_LOCAL); nullptr when it lacks the symbol. IoError naming path, "cannot load <what>:
// <dlerror>", when it cannot be loaded.
void* library_symbol(const std::string& path, const std::string& what, const char* symbol);

}  // namespace newscls
