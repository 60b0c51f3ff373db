/* Ribbon function commands (ExecuteFunction). */
function refreshAll(event: Office.AddinCommands.Event): void {
  event.completed();
}

Office.onReady(() => {
  Office.actions.associate("refreshAll", refreshAll);
});
