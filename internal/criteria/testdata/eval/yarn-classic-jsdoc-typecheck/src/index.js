"use strict";

/**
 * @param {string} text
 * @returns {string}
 */
function format(text) {
  return text.trim() + "\n";
}

module.exports = { format };
