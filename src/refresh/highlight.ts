/**
 * The two colours of "Show changes" (issue #15), apart from the change record so the task pane's
 * first bundle (its legend) takes only these two strings.
 */

/** Changed cells: the fill of Excel's "Neutral" cell style (light yellow). */
export const CHANGED_FILL = "#FFEB9C";
/** Added rows: the fill of Excel's "Good" cell style (light green). */
export const ADDED_FILL = "#C6EFCE";
