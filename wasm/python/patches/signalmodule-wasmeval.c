
/* wasmeval: appended to Modules/signalmodule.c by wasm/python/build.sh.
 *
 * The host interrupts a running cell from another thread by storing 1 into
 * the same flags that trip_signal(SIGINT) sets; the eval loop then raises
 * KeyboardInterrupt at its next check. These flags are static, so this
 * accessor hands their addresses (offsets in linear memory) to the shim. */
void
_wasmeval_sigint_flags(int **handler_tripped, int **any_tripped)
{
    *handler_tripped = (int *)&Handlers[SIGINT].tripped;
    *any_tripped = (int *)&is_tripped;
}
