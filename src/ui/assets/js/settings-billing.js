// @ts-check
// Settings: Billing and order list: the billing day, time and time zone of the monthly
// meter reads, the order list's window, and its weekly e-mail. One section, saved on its own.
import { chk, choice, field, inp, intOf, settingsForm } from './settings-form.js';

/** @typedef {import('./types').Schemas['Settings']} Settings */
const WEEKDAYS = /** @type {const} */ (['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday']);

/** @param {Settings} s */
export function billingSection(s) {
  const b = s.billing;
  const o = s.order_list;
  const enabled = chk(b.enabled);
  const day = inp('number', b.day, { min: 1, max: 31, inputmode: 'numeric' });
  const time = inp('time', b.time, {});
  const zone = inp('text', b.time_zone, { autocomplete: 'off', spellcheck: 'false' });
  const within = inp('number', o.within_days, { min: 1, max: 365, inputmode: 'numeric' });
  const mail = chk(o.email_enabled);
  const weekday = choice([...WEEKDAYS], o.email_weekday);
  const mailTime = inp('time', o.email_time, {});
  return {
    node: settingsForm('settings-billing', 'Billing and order list', [
      field('billing.enabled', 'Take a meter read of every saved printer each month', enabled),
      field('billing.day', 'Billing day of the month', day, '1 to 31; past the month\'s end, its last day'),
      field('billing.time', 'Billing time', time, '24-hour, in the time zone below'),
      field('billing.time_zone', 'Time zone', zone, 'The site\'s, such as Europe/Berlin or UTC; also the order list e-mail\'s'),
      field('order_list.within_days', 'Order supplies forecast to run out within (days)', within, '1 to 365'),
      field('order_list.email_enabled', 'E-mail the order list every week to the recipients of supply alerts', mail,
        'Through Notifications; nothing is sent in a week with nothing to order'),
      field('order_list.email_weekday', 'On', weekday),
      field('order_list.email_time', 'At', mailTime, '24-hour, in the time zone above'),
    ], () => ({
      billing: { enabled: enabled.checked, day: intOf(day), time: time.value, time_zone: zone.value.trim() },
      order_list: {
        within_days: intOf(within), email_enabled: mail.checked,
        email_weekday: /** @type {Settings['order_list']['email_weekday']} */ (weekday.value), email_time: mailTime.value,
      },
    })),
  };
}
