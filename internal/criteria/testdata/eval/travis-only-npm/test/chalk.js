import test from 'ava';
import chalk from '..';

test('returns the string', t => {
	t.is(chalk('foo'), 'foo');
});
