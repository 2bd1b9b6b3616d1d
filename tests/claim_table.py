"""The value-update and paraphrase table shared by the write-path and extraction tests.

Each row is what a user says in one session and then in a later one, with the third-person
content an agent would write for it and the attribute it would use. A value update must never
be folded into the earlier record (it supersedes it, or is recorded as a conflict); a paraphrase
must reinforce the earlier record.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Pair:
    kind: str
    attribute: str
    said1: str
    said2: str
    content1: str
    content2: str

    @property
    def id(self) -> str:
        return f"{self.kind}:{self.said1[:30]}->{self.said2[:30]}"


def _p(kind, attribute, said1, said2, content1, content2) -> Pair:
    return Pair(kind, attribute, said1, said2, content1, content2)


UPDATES: list[Pair] = [
    _p("identifier", "phone_number", "My phone number is 555-0143.", "My phone number is 555-0199.",
       "The user's phone number is 555-0143.", "The user's phone number is 555-0199."),
    _p("identifier", "timezone", "I'm on UTC+1.", "I'm on UTC+2.",
       "The user is on UTC+1.", "The user is on UTC+2."),
    _p("date", "flight_to_lisbon", "My flight to Lisbon is on 2026-04-10.", "My flight to Lisbon is on 2026-04-12.",
       "The user's flight to Lisbon is on 2026-04-10.", "The user's flight to Lisbon is on 2026-04-12."),
    _p("time", "stand_up", "My stand-up is at 9:00.", "My stand-up is at 9:30.",
       "The user's stand-up is at 9:00.", "The user's stand-up is at 9:30."),
    _p("amount", "rent", "My rent is $1,200.", "My rent is $1,450.",
       "The user's rent is $1,200.", "The user's rent is $1,450."),
    _p("amount", "dose", "My dose is 50 mg.", "My dose is 100 mg.",
       "The user's dose is 50 mg.", "The user's dose is 100 mg."),
    _p("identifier", "flight_number", "My flight number is TP 1234.", "My flight number is TP 1290.",
       "The user's flight number is TP 1234.", "The user's flight number is TP 1290."),
    _p("identifier", "ip_address", "My IP address is 192.168.1.20.", "My IP address is 192.168.1.42.",
       "The user's IP address is 192.168.1.20.", "The user's IP address is 192.168.1.42."),
    _p("date", "passport_expiry", "My passport expiry is 2031-05-14.", "My passport expiry is 2032-05-14.",
       "The user's passport expiry is 2031-05-14.", "The user's passport expiry is 2032-05-14."),
    _p("name", "name", "My name is Alice Moreau.", "My name is Alicia Moreau.",
       "The user's name is Alice Moreau.", "The user's name is Alicia Moreau."),
    _p("name", "employer", "I work at Acme.", "I work at Globex.",
       "The user works at Acme.", "The user works at Globex."),
    _p("name", "home_location", "I live in Berlin.", "I live in Hamburg.",
       "The user lives in Berlin.", "The user lives in Hamburg."),
    _p("name", "manager", "My manager is Sam Lee.", "My manager is Priya Shah.",
       "The user's manager is Sam Lee.", "The user's manager is Priya Shah."),
    _p("identifier", "email", "My email is alice@example.com.", "My email is alice.m@example.org.",
       "The user's email is alice@example.com.", "The user's email is alice.m@example.org."),
    _p("date", "birthday", "My birthday is March 3.", "My birthday is March 13.",
       "The user's birthday is March 3.", "The user's birthday is March 13."),
    _p("negation", "jazz_preference", "I love jazz.", "I hate jazz.",
       "The user loves jazz.", "The user hates jazz."),
    _p("negation", "spicy_food_preference", "I like spicy food.", "I dislike spicy food.",
       "The user likes spicy food.", "The user dislikes spicy food."),
    _p("negation", "running_preference", "I enjoy running.", "I hate running.",
       "The user enjoys running.", "The user hates running."),
    _p("negation", "meeting_preference", "I like long meetings.", "I don't like long meetings.",
       "The user likes long meetings.", "The user doesn't like long meetings."),
    _p("number", "standup_length", "My stand-up length is 15 minutes.", "My stand-up length is 20 minutes.",
       "The user's stand-up length is 15 minutes.", "The user's stand-up length is 20 minutes."),
    _p("amount", "salary", "My salary is €52,000.", "My salary is €58,000.",
       "The user's salary is €52,000.", "The user's salary is €58,000."),
    _p("amount", "budget", "My budget is 300 euros.", "My budget is 350 euros.",
       "The user's budget is 300 euros.", "The user's budget is 350 euros."),
    _p("amount", "weight", "My weight is 72 kg.", "My weight is 75 kg.",
       "The user's weight is 72 kg.", "The user's weight is 75 kg."),
    _p("time", "alarm", "My alarm is at 6:30 am.", "My alarm is at 7:15 am.",
       "The user's alarm is at 6:30 am.", "The user's alarm is at 7:15 am."),
    _p("time", "gym_session", "My gym session is at 6 pm.", "My gym session is at 7 pm.",
       "The user's gym session is at 6 pm.", "The user's gym session is at 7 pm."),
    _p("date", "dentist_appointment", "My dentist appointment is on April 2, 2026.", "My dentist appointment is on April 9, 2026.",
       "The user's dentist appointment is on April 2, 2026.", "The user's dentist appointment is on April 9, 2026."),
    _p("identifier", "server_port", "My server port is 8080.", "My server port is 8443.",
       "The user's server port is 8080.", "The user's server port is 8443."),
    _p("identifier", "license_plate", "My license plate is KA-4821.", "My license plate is KA-4827.",
       "The user's license plate is KA-4821.", "The user's license plate is KA-4827."),
    _p("number", "kids", "I have two kids.", "I have three kids.",
       "The user has two kids.", "The user has three kids."),
    _p("name", "favourite_editor", "My favourite editor is Vim.", "My favourite editor is Emacs.",
       "The user's favourite editor is Vim.", "The user's favourite editor is Emacs."),
    _p("name", "job_role", "I work as a data engineer.", "I work as a product manager.",
       "The user works as a data engineer.", "The user works as a product manager."),
    _p("identifier", "room_number", "My room number is 4B.", "My room number is 7C.",
       "The user's room number is 4B.", "The user's room number is 7C."),
]

PARAPHRASES: list[Pair] = [
    _p("identifier", "phone_number", "My phone number is 555-0143.", "My phone number is 555 0143.",
       "The user's phone number is 555-0143.", "The user's phone number is 555 0143."),
    _p("identifier", "timezone", "I'm on UTC+1.", "I'm on UTC +1.",
       "The user is on UTC+1.", "The user's time zone is UTC+1."),
    _p("date", "flight_to_lisbon", "My flight to Lisbon is on 2026-04-10.", "My flight to Lisbon is on April 10, 2026.",
       "The user's flight to Lisbon is on 2026-04-10.", "The user flies to Lisbon on April 10, 2026."),
    _p("time", "stand_up", "My stand-up is at 9:00.", "My stand-up is at 9 am.",
       "The user's stand-up is at 9:00.", "The user's stand-up meeting starts at 9 am."),
    _p("amount", "rent", "My rent is $1,200.", "My rent is 1200 dollars.",
       "The user's rent is $1,200.", "The user pays $1,200 in rent."),
    _p("amount", "dose", "My dose is 50 mg.", "My dose is 50mg.",
       "The user's dose is 50 mg.", "The user takes a 50 mg dose."),
    _p("identifier", "flight_number", "My flight number is TP 1234.", "My flight number is TP1234.",
       "The user's flight number is TP 1234.", "The user is booked on flight TP1234."),
    _p("identifier", "ip_address", "My IP address is 192.168.1.20.", "My IP address is 192.168.1.20 now.",
       "The user's IP address is 192.168.1.20.", "The user's IP is 192.168.1.20."),
    _p("date", "passport_expiry", "My passport expiry is 2031-05-14.", "My passport expiry is 14 May 2031.",
       "The user's passport expiry is 2031-05-14.", "The user's passport expires on 14 May 2031."),
    _p("name", "name", "My name is Alice Moreau.", "My name is Alice Moreau!",
       "The user's name is Alice Moreau.", "The user is called Alice Moreau."),
    _p("name", "employer", "I work at Acme.", "I work for Acme.",
       "The user works at Acme.", "The user is employed by Acme."),
    _p("name", "home_location", "I live in Berlin.", "I'm based in Berlin.",
       "The user lives in Berlin.", "The user is based in Berlin."),
    _p("name", "manager", "My manager is Sam Lee.", "My boss is Sam Lee.",
       "The user's manager is Sam Lee.", "Sam Lee is the user's manager."),
    _p("identifier", "email", "My email is alice@example.com.", "My email address is alice@example.com.",
       "The user's email is alice@example.com.", "The user's email address is alice@example.com."),
    _p("date", "birthday", "My birthday is March 3.", "My birthday is 3 March.",
       "The user's birthday is March 3.", "The user was born on March 3."),
    _p("negation", "jazz_preference", "I love jazz.", "I really love jazz.",
       "The user loves jazz.", "The user really loves jazz music."),
    _p("negation", "spicy_food_preference", "I like spicy food.", "I really like spicy food.",
       "The user likes spicy food.", "The user enjoys spicy food."),
    _p("negation", "running_preference", "I enjoy running.", "I really enjoy running.",
       "The user enjoys running.", "The user likes running."),
    _p("negation", "meeting_preference", "I don't like long meetings.", "I do not like long meetings.",
       "The user doesn't like long meetings.", "The user does not like long meetings."),
    _p("number", "standup_length", "My stand-up length is 15 minutes.", "My stand-up length is 15 min.",
       "The user's stand-up length is 15 minutes.", "The user's stand-up lasts 15 minutes."),
    _p("amount", "salary", "My salary is €52,000.", "My salary is 52,000 euros.",
       "The user's salary is €52,000.", "The user earns €52,000."),
    _p("amount", "budget", "My budget is 300 euros.", "My budget is €300.",
       "The user's budget is 300 euros.", "The user has a budget of €300."),
    _p("amount", "weight", "My weight is 72 kg.", "My weight is 72 kilograms.",
       "The user's weight is 72 kg.", "The user weighs 72 kg."),
    _p("time", "alarm", "My alarm is at 6:30 am.", "My alarm is at 6:30.",
       "The user's alarm is at 6:30 am.", "The user's alarm goes off at 6:30 am."),
    _p("time", "gym_session", "My gym session is at 6 pm.", "My gym session is at 18:00.",
       "The user's gym session is at 6 pm.", "The user's gym session starts at 18:00."),
    _p("date", "dentist_appointment", "My dentist appointment is on April 2, 2026.", "My dentist appointment is on 2 April 2026.",
       "The user's dentist appointment is on April 2, 2026.", "The user sees the dentist on 2 April 2026."),
    _p("identifier", "server_port", "My server port is 8080.", "My server port is 8080 again.",
       "The user's server port is 8080.", "The user's server listens on port 8080."),
    _p("identifier", "license_plate", "My license plate is KA-4821.", "My license plate is KA 4821.",
       "The user's license plate is KA-4821.", "The user's car has license plate KA 4821."),
    _p("number", "kids", "I have two kids.", "I have 2 kids.",
       "The user has two kids.", "The user has 2 children."),
    _p("name", "favourite_editor", "My favourite editor is Vim.", "My favorite editor is Vim.",
       "The user's favourite editor is Vim.", "The user's favorite editor is Vim."),
    _p("name", "job_role", "I work as a data engineer.", "I'm a data engineer.",
       "The user works as a data engineer.", "The user is a data engineer."),
    _p("identifier", "room_number", "My room number is 4B.", "My room number is 4B, still.",
       "The user's room number is 4B.", "The user is in room 4B."),
]
