// The exit statuses of newscls commands (README, "Exit codes"), in one place: main's error
// handler, serve's second stop signal and distributed training's watchdog end with them.
#pragma once

namespace newscls {

inline constexpr int kExitError = 1;          // any error not below
inline constexpr int kExitUsage = 2;          // a request refused before any work
inline constexpr int kExitInterrupted = 130;  // SIGINT or SIGTERM, as a shell reports SIGINT

}  // namespace newscls
