// Cooperative cancellation on SIGINT/SIGTERM: long loops call check_interrupted(),
// which throws InterruptedError once a signal has arrived, so outputs in progress are
// abandoned (temporary files removed) and complete ones are kept.
#pragma once

namespace newscls {

void install_interrupt_handlers();
bool interrupted();
// How many signals have arrived: work that finishes before stopping (paid requests in flight)
// stops at once on the second.
int interrupt_count();
void check_interrupted();

}  // namespace newscls
