'use strict';

function chalk(str) {
	return String(str);
}

module.exports = chalk;
module.exports.default = module.exports;
